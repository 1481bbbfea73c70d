import { eventChecks } from './_events.js'
import { listChecks } from './_list.js'
import { loadChecks } from './_load.js'
import { ownerChecks } from './_owners.js'
import { type StoreContractOptions, withStore } from './_session.js'
import { taskChecks } from './_tasks.js'

export type { StoreContractOptions } from './_session.js'

/** One behaviour of the contract: run it in a test of its own. */
export interface StoreCheck {
  name: string
  /**
   * Opens a store, checks, and closes the store (`close`) whatever happened; rejects with an `AssertionError` when the
   * store breaks the contract.
   */
  run(): Promise<void>
}

/**
 * The behaviours every `TaskStore` must have for the runtime to work on it, as checks that any test runner can
 * run (they throw `node:assert` errors):
 *
 * ```ts
 * for (const check of taskStoreContract({ open: () => new PostgresTaskStore(url) })) it(check.name, check.run)
 * ```
 *
 * Each check drives its store as the runtime does: `create` once, then `append(task, event)` with the live task
 * after applying each event, numbered from 1, without waiting for one write before the next (a settling event
 * waits for all of them); a follow-up joins the history outside any event; on a store with a `cluster` link, the
 * task's lease is held while it runs. The task a store gives back must equal, as JSON, the one the runtime holds.
 * A task created with an owner is that owner's only: read with another owner it is as absent as an unknown id.
 * Status times are set by the checks, increasing from the present, so nothing waits on the clock. A store that
 * keeps its data elsewhere needs an empty place per `open` (a fresh key prefix, schema or directory).
 */
export function taskStoreContract(options: StoreContractOptions): StoreCheck[] {
  const canReopen = options.reopen !== undefined
  const checks = [
    ...taskChecks(canReopen),
    ...eventChecks(),
    ...listChecks(),
    ...ownerChecks(canReopen),
    ...loadChecks(),
  ]
  return checks.map(({ name, check }) => ({ name, run: () => withStore(options, check) }))
}
