import { ConfigurationError } from '../errors.js'
import type { Logger } from '../logger.js'
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
const MAX_DETAIL = 200

/**
 * The reasons `/readyz` gives, fixed texts: it answers anyone, before the web-origin guard, so the store's own error
 * (an address inside the network, the database user a login failed for) goes to the server's log, never the answer.
 */
const UNREACHABLE = 'the task store is unreachable'
const NO_ANSWER = `the task store did not answer within ${PROBE_TIMEOUT_MS} ms`

/** A check's outcome: the reason the probe gives (none: ready) and the store's error behind it, for the log. */
interface Outcome {
  reason: string | undefined
  detail?: string
}

/**
 * Whether the store can serve now, as `/readyz` asks: its `reachable` (a round trip: Redis PING, PostgreSQL
 * `SELECT 1`), else its `ready`; a store with neither (memory, file) always can. One check at a time, its answer
 * kept for a second. The log hears of a change only (unreachable with another error, answering again), not of
 * every probe: a kubelet probing every few seconds must not fill it.
 */
export class StoreProbe {
  readonly #store: TaskStore
  readonly #logger: Logger
  #checkedAt = Number.NEGATIVE_INFINITY
  #answer: string | undefined
  #checking: Promise<string | undefined> | undefined
  /** What the log last said, as `reason: detail`; `undefined` while the store answers (as at the start). */
  #logged: string | undefined

  constructor(store: TaskStore, logger: Logger) {
    this.#store = store
    this.#logger = logger
  }

  /** Why the store cannot serve, or `undefined` when it can. */
  problem(): Promise<string | undefined> {
    if (!this.#store.reachable && !this.#store.ready) return Promise.resolve(undefined)
    if (performance.now() - this.#checkedAt < PROBE_CACHE_MS) return Promise.resolve(this.#answer)
    this.#checking ??= this.#check().then((outcome) => {
      this.#log(outcome)
      this.#answer = outcome.reason
      this.#checkedAt = performance.now()
      this.#checking = undefined
      return outcome.reason
    })
    return this.#checking
  }

  #log({ reason, detail }: Outcome): void {
    const said = reason && (detail ? `${reason}: ${detail}` : reason)
    if (said === this.#logged) return
    if (said === undefined) this.#logger.info('Readiness: the task store answers again')
    else this.#logger.warn(`Readiness: ${said} (/readyz answers 503 until it answers)`)
    this.#logged = said
  }

  async #check(): Promise<Outcome> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timedOut = new Promise<Outcome>((resolve) => {
      timer = setTimeout(() => resolve({ reason: NO_ANSWER }), PROBE_TIMEOUT_MS)
    })
    const store = this.#store
    const check = (store.reachable ? store.reachable() : store.ready!()).then(
      (): Outcome => ({ reason: undefined }),
      (error: unknown): Outcome => ({ reason: UNREACHABLE, detail: detailOf(error) }),
    )
    try {
      return await Promise.race([check, timedOut])
    } finally {
      clearTimeout(timer)
    }
  }
}

function detailOf(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ')
  return message.length > MAX_DETAIL ? `${message.slice(0, MAX_DETAIL)}…` : message
}
