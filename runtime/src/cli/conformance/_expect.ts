import { isObject } from '../../_is-object.js'
import { A2A_ERRORS, type CheckedErrorName, type ErrorMapping, grpcName } from './_errors-table.js'
import { fail, type Verdict } from './_results.js'
import { type Answer, describe, type Json, type Transport, type WireError } from './_wire.js'

/**
 * What every call of a binding answered, kept for the checks of the binding's own forms (content types, the
 * JSON-RPC envelope, the error shapes), which judge them all at the end.
 */
export interface Seen {
  answers: Array<{ operation: string; answer: Answer }>
  /** Errors answered where an A2A error (one with an ErrorInfo reason) was expected. */
  a2aErrors: Array<{ operation: string; expected: CheckedErrorName; error: WireError }>
}

export const newSeen = (): Seen => ({ answers: [], a2aErrors: [] })

/** An error in a binding's own terms: `JSON-RPC error -32001`, `HTTP 404 with reason TASK_NOT_FOUND`. */
export function inBinding(transport: Transport, name: CheckedErrorName): string {
  const mapping: ErrorMapping = A2A_ERRORS[name]
  const reason = mapping.reason ? ` (ErrorInfo reason ${mapping.reason})` : ''
  if (transport === 'jsonrpc') return `${name}: JSON-RPC error ${mapping.jsonrpc}`
  if (transport === 'http_json')
    return `${name}: HTTP ${mapping.http}${mapping.alsoHttp ? ` (or v1.0.0's ${mapping.alsoHttp})` : ''}${reason}`
  return `${name}: ${grpcName(mapping.grpc)}${mapping.alsoGrpc ? ` (or v1.0.0's ${grpcName(mapping.alsoGrpc)})` : ''}${reason}`
}

/** Whether an error is `name` in the binding: its code (§5.4), and its reason where it gives one. */
export function isError(transport: Transport, error: WireError, name: CheckedErrorName): boolean {
  const mapping: ErrorMapping = A2A_ERRORS[name]
  const codes =
    transport === 'jsonrpc'
      ? [mapping.jsonrpc]
      : transport === 'http_json'
        ? [mapping.http, mapping.alsoHttp]
        : [mapping.grpc, mapping.alsoGrpc]
  if (!codes.includes(error.code)) return false
  return error.reason === undefined || mapping.reason === undefined || error.reason === mapping.reason
}

/** What came, in a few words. */
export function actualOf(answer: Answer): string {
  if (answer.problem) return answer.problem
  if (answer.refused) return `refused (HTTP ${answer.refused})`
  if (answer.error) return answer.error.summary
  return `a result: ${describe(answer.value)}`
}

/** The check that a call answered the A2A error `name`, recording the error for the binding's shape checks. */
export function expectError(
  transport: Transport,
  seen: Seen,
  operation: string,
  answer: Answer,
  name: CheckedErrorName,
): Verdict {
  // Its ErrorInfo is judged where the code says it is this A2A error (a wrong code is this check's failure alone).
  const error = answer.error
  if (error && A2A_ERRORS[name].reason !== undefined && isError(transport, { ...error, reason: undefined }, name))
    seen.a2aErrors.push({ operation, expected: name, error })
  if (error && isError(transport, error, name)) return undefined
  return fail(inBinding(transport, name), actualOf(answer))
}

export const TERMINAL = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
])
export const INTERRUPTED = new Set(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED'])
const STATES = new Set([...TERMINAL, ...INTERRUPTED, 'TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'])

export const isTask = (value: unknown): value is Json =>
  isObject(value) && typeof value.id === 'string' && isObject(value.status)

/** What is wrong with a Task's state, if anything (`TASK_STATE_…` names, §5.5). */
export function stateProblem(task: Json): string | undefined {
  const state = task.status?.state
  return STATES.has(state) ? undefined : `status.state ${describe(state)}`
}

/** The one field of a StreamResponse that is set, or why there is not exactly one. */
export function streamKind(event: unknown): string | { problem: string } {
  const kinds = ['task', 'message', 'statusUpdate', 'artifactUpdate']
  const set = isObject(event) ? kinds.filter((kind) => isObject(event[kind])) : []
  return set.length === 1
    ? set[0]!
    : { problem: `${describe(event)} is not a StreamResponse (one of ${kinds.join(', ')})` }
}
