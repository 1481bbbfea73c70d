import type { Server } from 'node:http'
import type { A2AApp } from '../http/app.js'
import type { Logger } from '../logger.js'
import type { NativeListener } from './_native-serve.js'

/** How long a shutdown waits for ended streams to flush before closing their connections. */
const FLUSH_MS = 1000
/** Bun and Deno tell nothing of a stream's flush: the moment ended streams get before their connections close. */
const FLUSH_MS_NATIVE = 100

/**
 * Closes the server once: it stops accepting, the app drains its tasks (running ones get `shutdownTimeoutMs`),
 * ended streams get a moment to flush, then every connection still open is closed. The same promise for every
 * call.
 */
export function gracefulClose(server: Server, app: A2AApp, closed?: () => void): () => Promise<void> {
  let closing: Promise<void> | undefined
  return () => {
    closing ??= (async () => {
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()))
      let done = false
      void serverClosed.then(() => {
        done = true
      })
      // While tasks drain and their streams flush, keep closing connections as they fall idle, so no
      // keep-alive client slips a new request in (the app refuses new tasks during shutdown anyway).
      const reaper = setInterval(() => server.closeIdleConnections(), 10)
      try {
        await app.close()
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
 * The same close for Bun's and Deno's servers: they stop accepting, the app drains its tasks and ends its
 * streams, ended streams get a moment to flush, then what is still open is closed.
 */
export function nativeClose(listener: NativeListener, app: A2AApp, closed?: () => void): () => Promise<void> {
  let closing: Promise<void> | undefined
  return () => {
    closing ??= (async () => {
      listener.stopAccepting()
      try {
        await app.close()
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
