import type { MaybePromise } from '../../types.js'
import type { TaskStore } from '../task-store.js'

/** How `taskStoreContract` opens the store it checks. */
export interface StoreContractOptions {
  /** A fresh, empty store; called once per check. */
  open(): MaybePromise<TaskStore>
  /**
   * The same data opened again, as after a restart (a durable store): closes `store` if it must (one process
   * per directory, say) and returns the new one. Without it, the checks of reopening are left out.
   */
  reopen?(store: TaskStore): MaybePromise<TaskStore>
}

/** The store a check works on, and the same data opened again when the suite was told how. */
export interface StoreSession {
  readonly store: TaskStore
  /** Opens the data again (`reopen`), which takes over the current store; `store` is the new one from then on. */
  reopen(): Promise<TaskStore>
}

/** One behaviour, checked on a session of its own. */
export interface SessionCheck {
  name: string
  check(session: StoreSession): Promise<void>
}

/** Runs a check on a fresh store and closes the store it ends with, whether the check passed or not. */
export async function withStore(
  options: StoreContractOptions,
  check: (session: StoreSession) => Promise<void>,
): Promise<void> {
  let store = await options.open()
  const session: StoreSession = {
    get store() {
      return store
    },
    async reopen() {
      if (!options.reopen) throw new Error('this check needs the `reopen` option')
      store = await options.reopen(store)
      return store
    },
  }
  try {
    await check(session)
  } finally {
    await store.close?.()
  }
}
