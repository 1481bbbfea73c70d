import { ConfigurationError } from '../errors.js'
import type { TaskStore } from './task-store.js'

/**
 * Waits for a store that says when it can serve (`TaskStore.ready`). One that never will as it is set up (a database
 * schema newer than the runtime, or left for `a2a store migrate`) is closed and its one-line `ConfigurationError`
 * thrown, so the start stops before anything listens; one that cannot be reached yet lets the start go on (its
 * requests get a 503 until it can serve).
 */
export async function refuseUnservableStore(
  store: TaskStore | undefined,
  close: () => Promise<unknown>,
): Promise<void> {
  try {
    await store?.ready?.()
  } catch (error) {
    if (!(error instanceof ConfigurationError)) return
    await close()
    throw error
  }
}
