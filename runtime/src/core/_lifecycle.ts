import type { TaskState } from '../types.js'

const TERMINAL = new Set<TaskState>(['completed', 'failed', 'canceled', 'rejected'])
const INTERRUPTED = new Set<TaskState>(['input-required', 'auth-required'])

/** No move leaves these states. */
export const isTerminal = (state: TaskState): boolean => TERMINAL.has(state)

/** The task waits for the client: the stream ends and a blocking send returns, but a follow-up resumes it. */
export const isInterrupted = (state: TaskState): boolean => INTERRUPTED.has(state)

/** Terminal or interrupted: the moment a blocking send answers and a stream closes. */
export const isSettled = (state: TaskState): boolean => TERMINAL.has(state) || INTERRUPTED.has(state)
