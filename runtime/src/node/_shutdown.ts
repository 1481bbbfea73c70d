import type { Server } from 'node:http'
import { appInternals } from '../http/_app-internals.js'
import type { A2AApp } from '../http/app.js'
import type { Logger } from '../logger.js'
import { runningCountOf } from '../multi/_running-tasks.js'
import type { A2AAgentsApp } from '../multi/agents-options.js'
import type { NativeListener } from './_native-serve.js'

/** How long a shutdown waits for ended streams to flush before closing their connections. */
const FLUSH_MS = 1000
/** Bun and Deno tell nothing of a stream's flush: the moment ended streams get before their connections close. */
const FLUSH_MS_NATIVE = 100

/** How often a shutdown looks whether the app's tasks have drained. */
const DRAIN_POLL_MS = 20

/**
 * Closes the server once. Readiness goes first: the app's close starts the drain at once, from when `/readyz`
 * answers 503 and new tasks are refused. The listener stays open while running tasks drain (up to
 * `shutdownTimeoutMs`): a platform that still routes to this instance for a moment after SIGTERM (Kubernetes takes
 * the pod out of its endpoints while the signal is on its way) gets answers rather than refused connections, and
 * its probes read the 503. Then it stops accepting, ended streams get a moment to flush, and every connection still
 * open is closed. The same promise for every call.
 */
export function gracefulClose(server: Server, app: A2AApp | A2AAgentsApp, closed?: () => void): () => Promise<void> {
  let closing: Promise<void> | undefined
  return () => {
    closing ??= (async () => {
      const appClosed = app.close()
      await drained(app, appClosed)
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()))
      let done = false
      void serverClosed.then(() => {
        done = true
      })
      // While the app closes (webhooks flush, the store closes) and streams flush, keep closing connections as
      // they fall idle, so no keep-alive client slips a new request in.
      const reaper = setInterval(() => server.closeIdleConnections(), 10)
      try {
        await appClosed
        const flushUntil = Date.now() + FLUSH_MS
        while (!done && Date.now() < flushUntil) await new Promise((resolve) => setTimeout(resolve, 10))
      } finally {
        clearInterval(reaper)
      }
      server.closeAllConnections()
      await serverClosed
      closed?.()
    })()
    return closing
  }
}

/**
 * Resolves once no task of the app runs any more (the drain let them finish, or failed them past its grace), or
 * once the app's close settled, whichever comes first; at once for an app neither `createA2AApp` nor `createAgentsApp`
 * made.
 */
async function drained(app: A2AApp | A2AAgentsApp, appClosed: Promise<void>): Promise<void> {
  const engine = 'agent' in app ? appInternals(app)?.engine : undefined
  const running = engine ? () => engine.runningCount : runningCountOf(app)
  if (!running) return
  let settled = false
  void appClosed.then(
    () => (settled = true),
    () => (settled = true),
  )
  while (!settled && running() > 0) await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS))
}

/**
 * SIGTERM and SIGINT shut down gracefully, then exit; a second one exits at once. The function returned stops
 * listening for them.
 */
export function exitOnSignals(close: () => Promise<void>, logger: Logger, shutdownTimeoutMs: number): () => void {
  let signalled = false
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      logger.warn(`${signal} again: exiting now`)
      process.exit(1)
    }
    signalled = true
    logger.info(`${signal}: shutting down (running tasks get up to ${shutdownTimeoutMs} ms)`)
    close().then(
      () => process.exit(0),
      (error) => {
        logger.error('Shutdown failed', error)
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
  return () => {
    process.off('SIGTERM', onSignal)
    process.off('SIGINT', onSignal)
  }
}

/**
 * The same close for Bun's and Deno's servers: the app drains its tasks (readiness false, still accepting), they
 * stop accepting, ended streams get a moment to flush, then what is still open is closed.
 */
export function nativeClose(
  listener: NativeListener,
  app: A2AApp | A2AAgentsApp,
  closed?: () => void,
): () => Promise<void> {
  let closing: Promise<void> | undefined
  return () => {
    closing ??= (async () => {
      // As on Node: readiness goes false, the listener stays open while tasks drain.
      const appClosed = app.close()
      await drained(app, appClosed)
      listener.stopAccepting()
      try {
        await appClosed
        await new Promise((resolve) => setTimeout(resolve, FLUSH_MS_NATIVE))
      } finally {
        // Closed whatever the app's close did: a failed drain must not leave connections open.
        await listener.closeAll()
        closed?.()
      }
    })()
    return closing
  }
}
