import { isObject } from '../../_is-object.js'
import { A2AError, ErrorCode, InvalidParamsError } from '../../errors.js'

/**
 * What the readers of every dialect's params share (the platform's, v0.3's, v1.0's, the push methods'): they
 * import it from here, never from each other. Each check names the field as the client wrote it.
 */

export type Json = Record<string, unknown>

/** A request's `params`, which must be an object. */
export function readParamsObject(params: unknown): Json {
  if (!isObject(params)) throw new InvalidParamsError('`params` must be an object')
  return params
}

/** Deeper JSON than any real message needs; past it, storing and answering would strain the stack. */
const MAX_DEPTH = 64

/** Refuses free-form JSON (data, metadata) nested deeper than MAX_DEPTH, naming the field. */
export function assertDepth(value: unknown, field: string, depth = 0): void {
  if (typeof value !== 'object' || value === null) return
  if (depth >= MAX_DEPTH) throw new InvalidParamsError(`\`${field}\` is nested more than ${MAX_DEPTH} levels deep`)
  for (const child of Array.isArray(value) ? value : Object.values(value)) assertDepth(child, field, depth + 1)
}

/**
 * A `historyLength` as given (absent, null, or a non-negative integer); an error names it `path.name` (built only
 * then: a request reads it every time).
 */
export function historyLengthOf(value: unknown, path: string, name: string): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new InvalidParamsError(`\`${path}.${name}\` must be a non-negative integer`)
  return value
}

/** `acceptedOutputModes` as given: an array of media types, or absent (or null, or empty: no preference). */
export function outputModesOf(modes: unknown, path: string, name: string): string[] | undefined {
  if (modes === undefined || modes === null) return undefined
  if (!Array.isArray(modes) || !modes.every((mode) => typeof mode === 'string'))
    throw new InvalidParamsError(`\`${path}.${name}\` must be an array of media types`)
  return modes.length ? modes : undefined
}

/**
 * Refuses a message whose client accepts none of the agent's output modes (-32005), so it is not run for
 * an answer nobody can read. `*\/*` and `type/*` match as usual.
 */
export function assertOutputModes(accepted: string[] | undefined, produced: string[]): void {
  if (!accepted) return
  const matches = (want: string, have: string) => {
    const [wantType, wantSub] = want.toLowerCase().split(';', 1)[0]!.trim().split('/')
    const [haveType, haveSub] = have.toLowerCase().split('/')
    return (wantType === '*' || wantType === haveType) && (wantSub === '*' || wantSub === haveSub)
  }
  if (accepted.some((want) => produced.some((have) => matches(want, have)))) return
  throw new A2AError(
    ErrorCode.ContentTypeNotSupported,
    `None of the accepted output modes (${accepted.join(', ')}) is one this agent produces (${produced.join(', ')})`,
  )
}
