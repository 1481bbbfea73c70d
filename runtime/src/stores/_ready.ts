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

/** How long an answer of the store stands for the probes that follow: a probe storm never becomes a store storm. */
const PROBE_CACHE_MS = 1000
/**
 * Most time a probe waits for the store. A kubelet gives a probe 1 s by default (`timeoutSeconds`): a store that
 * has not answered by then is reported unreachable rather than have the probe time out with no reason given.
 */
const PROBE_TIMEOUT_MS = 750
const MAX_REASON = 200

/**
 * Whether the store can serve now, as `/readyz` asks: its `reachable` (a round trip: Redis PING, PostgreSQL
 * `SELECT 1`), else its `ready`; a store with neither (memory, file) always can. One check at a time, its answer
 * kept for a second.
 */
export class StoreProbe {
  readonly #store: TaskStore
  #checkedAt = Number.NEGATIVE_INFINITY
  #answer: string | undefined
  #checking: Promise<string | undefined> | undefined

  constructor(store: TaskStore) {
    this.#store = store
  }

  /** Why the store cannot serve, or `undefined` when it can. */
  problem(): Promise<string | undefined> {
    if (!this.#store.reachable && !this.#store.ready) return Promise.resolve(undefined)
    if (performance.now() - this.#checkedAt < PROBE_CACHE_MS) return Promise.resolve(this.#answer)
    this.#checking ??= this.#check().then((answer) => {
      this.#answer = answer
      this.#checkedAt = performance.now()
      this.#checking = undefined
      return answer
    })
    return this.#checking
  }

  async #check(): Promise<string | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timedOut = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`the task store did not answer within ${PROBE_TIMEOUT_MS} ms`), PROBE_TIMEOUT_MS)
    })
    const store = this.#store
    const check = (store.reachable ? store.reachable() : store.ready!()).then(
      () => undefined,
      (error: unknown) => `the task store cannot serve: ${reasonOf(error)}`,
    )
    try {
      return await Promise.race([check, timedOut])
    } finally {
      clearTimeout(timer)
    }
  }
}

function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.length > MAX_REASON ? `${message.slice(0, MAX_REASON)}…` : message
}
