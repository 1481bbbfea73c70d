import type { Server } from 'node:http'
import type { Logger } from '../logger.js'

/** How long Ctrl-C waits for running tasks and open streams before failing them. */
export const SHUTDOWN_GRACE_MS = 10_000
/** How long a shutdown waits for ended streams to flush before closing their connections. */
const FLUSH_MS = 1000
/** Past this, a quiet shutdown says what it waits for. */
const SAY_WAITING_AFTER_MS = 500

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())

/** What a dev server serves: one agent (`DevAgent`) or a folder of them (`DevAgents`). */
interface DevServed {
  /** Requests being answered. */
  readonly inFlight: number
  /** Drains the running tasks, then closes the store. */
  close(): Promise<void>
}

export interface DevListener {
  server: Server
  close(): Promise<void>
}

/**
 * Ctrl-C (or SIGTERM) stops the dev server: the watcher and the address file go, running tasks get up to 10 s
 * and ended streams a moment to flush (saying what it waits for), then every connection still open is cut and
 * the process exits. A second signal stops at once.
 */
export function stopOnSignals(
  dev: DevServed,
  listener: DevListener,
  stopWatching: () => void,
  removeAddress: () => void,
  logger: Logger,
): void {
  let stopping = false
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(`${signal} again: stopping now`)
      process.exit(130)
    }
    stopping = true
    logger.info(`${signal}: stopping the dev server`)
    stopWatching()
    removeAddress()
    // A stream open or a task running holds the exit for up to the grace period: never silently.
    const sayWaiting = () =>
      logger.info(
        `Waiting up to ${SHUTDOWN_GRACE_MS / 1000} s for running tasks${dev.inFlight ? ` and ${dev.inFlight} open request(s)` : ''} to finish; press Ctrl-C again to stop now`,
      )
    if (dev.inFlight > 0) sayWaiting()
    const later = dev.inFlight > 0 ? undefined : setTimeout(sayWaiting, SAY_WAITING_AFTER_MS)
    // Both at once: the streams end as the drain settles their tasks, and only then can the listener close.
    const closed = listener.close()
    // The drain is bounded by the grace itself; the timer only keeps that promise should anything else hang (the
    // store's close included: a database that stopped answering must not hold the exit).
    const closing = dev
      .close()
      .catch((error: unknown) => logger.warn(`The app and its task store did not close: ${(error as Error).message}`))
    await Promise.race([closing, delay(SHUTDOWN_GRACE_MS + FLUSH_MS)])
    // Ended streams get a moment to flush. A connection still open after that (a client that stopped reading,
    // a request whose body never ends) would hold the exit for good: cut it, as serveAgent does.
    await Promise.race([closed, delay(FLUSH_MS)])
    listener.server.closeAllConnections()
    clearTimeout(later)
    process.exit(0)
  }
  process.on('SIGINT', shutdown)
  process.on('SIGTERM', shutdown)
}
