import type { Instrumentation, StoreCallStart } from './_hooks.js'

/**
 * The instrumentation each store reports its I/O to, set by the app that uses it. Kept here rather than on the
 * store, so the stores' public types stay as they are; a store no app instruments pays one lookup per call.
 */
const watched = new WeakMap<object, Instrumentation>()

/** `store`'s calls that do I/O are reported to `instrumentation` from now on. */
export function watchStore(store: object, instrumentation: Instrumentation): void {
  watched.set(store, instrumentation)
}

/** Runs `io`, a call of `store` that touches disk or network, as a store call of its app's instrumentation. */
export function storeCall<T>(
  store: object,
  name: StoreCallStart['store'],
  operation: string,
  taskId: string | undefined,
  io: () => Promise<T>,
): Promise<T> {
  const instrumentation = watched.get(store)
  return instrumentation ? instrumentation.storeCall({ store: name, operation, taskId }, io) : io()
}
