import { isObject } from '../_is-object.js'
import { InvalidParamsError } from '../errors.js'

/**
 * What the readers of every dialect's params share (the platform's, v0.3's, v1.0's, the push methods'): they
 * import it from here, never from each other.
 */

export type Json = Record<string, unknown>

/** A request's `params`, which must be an object. */
export function readParamsObject(params: unknown): Json {
  if (!isObject(params)) throw new InvalidParamsError('`params` must be an object')
  return params
}
