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

/** Stores whose calls are reported as another's: a store made later for the app's stand-in (stores/_lazy-store.ts). */
const reportedAs = new WeakMap<object, object>()

/** `store`'s calls are reported to whatever instrumentation watches `as`, now or later. */
export function reportAs(store: object, as: object): void {
  reportedAs.set(store, as)
}

/** Runs `io`, a call of `store` that touches disk or network, as a store call of its app's instrumentation. */
export function storeCall<T>(
  store: object,
  name: StoreCallStart['store'],
  operation: string,
  taskId: string | undefined,
  io: () => Promise<T>,
): Promise<T> {
  const as = reportedAs.get(store)
  const instrumentation = watched.get(store) ?? (as && watched.get(as))
  return instrumentation ? instrumentation.storeCall({ store: name, operation, taskId }, io) : io()
}
