import type { RequestLine } from '../_log-json.js'
import { ConfigurationError } from '../errors.js'
import type { A2AApp } from '../http/app.js'
import { type LogRoute, logPath } from './_request-log.js'

/**
 * Bun's and Deno's own HTTP servers, which serve a fetch handler natively: the app's `fetch` goes to them as
 * it is, without Node's `node:http` emulation in between (several times the throughput on Bun). Only the
 * parts of each API used here are declared, so the package needs neither runtime's types.
 */

export type NativeRuntime = 'bun' | 'deno'

interface BunServer {
  readonly port: number
  stop(closeActiveConnections?: boolean): Promise<void>
  timeout(request: Request, seconds: number): void
}
interface BunGlobal {
  serve(options: {
    port: number
    hostname: string
    idleTimeout: number
    fetch: (request: Request, server: BunServer) => Response | Promise<Response>
    error: (error: Error) => Response
  }): BunServer
}
interface DenoServer {
  readonly addr: { port: number }
  readonly finished: Promise<void>
  shutdown(): Promise<void>
}
interface DenoGlobal {
  serve(
    options: {
      port: number
      hostname: string
      onListen: () => void
      onError: (error: unknown) => Response
      signal: AbortSignal
    },
    handler: (request: Request) => Response | Promise<Response>,
  ): DenoServer
}

/** The runtime whose native server serves the agent, or `undefined` on Node (and runtimes that emulate it only). */
export function nativeRuntime(): NativeRuntime | undefined {
  if ((globalThis as { Bun?: unknown }).Bun) return 'bun'
  if ((globalThis as { Deno?: unknown }).Deno) return 'deno'
  return undefined
}

export interface NativeListener {
  port: number
  /** Stops accepting connections; requests in flight go on. */
  stopAccepting(): void
  /** Closes what is still open. */
  closeAll(): Promise<void>
}

export interface NativeServeSettings {
  port: number
  hostname: string
  /**
   * Bun closes a connection that sends and receives nothing this long (its `idleTimeout`, whole seconds up to
   * 255): a slow request, an idle keep-alive connection, and an answer that takes longer; an SSE stream is
   * exempt once it starts.
   */
  idleTimeoutMs: number
  log?: (line: RequestLine) => void
  /** The route a log line shows for a request's URL (a server of several agents knows their paths). */
  route?: LogRoute
}

/** How long closing waits for the runtime to confirm its connections are closed. */
const CLOSE_WAIT_MS = 1000
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** An error the server itself met: nothing the client sent explains it, so it learns only that something failed. */
const internalError = (): Response =>
  new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } }), {
    status: 500,
    headers: { 'content-type': 'application/json' },
  })

export async function listenNative(
  runtime: NativeRuntime,
  app: Pick<A2AApp, 'fetch'>,
  settings: NativeServeSettings,
): Promise<NativeListener> {
  const handler = settings.log ? withNativeRequestLog(app.fetch, settings.log, settings.route ?? logPath) : app.fetch
  return runtime === 'bun' ? listenBun(handler, settings) : listenDeno(handler, settings)
}

function listenBun(handler: (request: Request) => Promise<Response>, settings: NativeServeSettings): NativeListener {
  const bun = (globalThis as unknown as { Bun: BunGlobal }).Bun
  let server: BunServer
  try {
    server = bun.serve({
      port: settings.port,
      hostname: settings.hostname,
      idleTimeout: Math.min(255, Math.max(1, Math.ceil(settings.idleTimeoutMs / 1000))),
      fetch: async (request, server) => {
        const response = await handler(request)
        // A stream stays quiet for as long as its task waits: Bun's idle timeout must not cut it. Everything
        // else keeps it (a trickled body, an idle keep-alive connection, an answer that takes longer).
        if (response.headers.get('content-type')?.startsWith('text/event-stream')) server.timeout(request, 0)
        return response
      },
      error: internalError,
    })
  } catch (error) {
    throw listenError(error, settings)
  }
  return {
    port: server.port,
    // Bun's graceful stop would make the forced one that follows do nothing (it acts only on a listening
    // server), and waits for every request, a stalled one too: the app refuses new work while it drains instead.
    stopAccepting: () => {},
    closeAll: () => Promise.race([server.stop(true), sleep(CLOSE_WAIT_MS)]),
  }
}

async function listenDeno(
  handler: (request: Request) => Promise<Response>,
  settings: NativeServeSettings,
): Promise<NativeListener> {
  const deno = (globalThis as unknown as { Deno: DenoGlobal }).Deno
  let listening!: () => void
  const ready = new Promise<void>((resolve) => {
    listening = resolve
  })
  // Aborting it closes every connection at once: Deno's graceful shutdown waits for every request, a stalled
  // upload too, and Deno has no request timeout to end one.
  const abort = new AbortController()
  let server: DenoServer
  try {
    server = deno.serve(
      {
        port: settings.port,
        hostname: settings.hostname,
        onListen: () => listening(),
        onError: internalError,
        signal: abort.signal,
      },
      handler,
    )
  } catch (error) {
    throw listenError(error, settings)
  }
  await ready
  let finished = false
  const done = server.finished.then(
    () => {
      finished = true
    },
    () => {
      finished = true
    },
  )
  return {
    port: server.addr.port,
    // Deno stops accepting at once; its promise resolves when the requests in flight are done.
    stopAccepting: () => void server.shutdown().catch(() => {}),
    closeAll: async () => {
      // Only a server still serving: aborting one that has finished throws from Deno's listener, uncaught.
      if (!finished) abort.abort()
      await Promise.race([done, sleep(CLOSE_WAIT_MS)])
    },
  }
}

/** A port in use or out of reach, said as on Node (the runtimes' own errors name neither the port nor the fix). */
function listenError(error: unknown, { port, hostname }: NativeServeSettings): unknown {
  const code = (error as { code?: string; name?: string }).code ?? (error as { name?: string }).name
  if (code === 'EADDRINUSE' || code === 'AddrInUse')
    return new ConfigurationError(
      `Port ${port} on ${hostname} is already in use: stop the other server or choose another port (PORT)`,
    )
  if (code === 'EACCES' || code === 'PermissionDenied')
    return new ConfigurationError(
      `No permission to listen on port ${port} on ${hostname}: choose a port above 1023 (PORT)`,
    )
  return error
}

/** The handler with one log line per request once its answer is ready: method, route, status, time. */
function withNativeRequestLog(
  fetch: (request: Request) => Promise<Response>,
  log: (line: RequestLine) => void,
  route: LogRoute,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const started = performance.now()
    const response = await fetch(request)
    const durationMs = performance.now() - started
    log({ method: request.method, route: route(request.url), status: response.status, durationMs })
    return response
  }
}
