import type { TaskEngine } from '../core/_engine.js'
import type { Logger } from '../logger.js'
import type { AppSettings } from './_app-settings.js'
import type { AuthCheck } from './_auth.js'
import type { Outgoing } from './_outgoing.js'
import type { ServedAgent } from './_served-agent.js'
import type { StreamLimit } from './_stream-limit.js'
import type { A2AApp } from './app-options.js'

/**
 * What an app's other servers share with it (`a2a dev`'s inspector, the gRPC server): the agent served now, its task
 * engine, settings and open streams. Kept beside the app rather than on it: `A2AApp` is public and stays as it is.
 */
export interface AppInternals {
  /** The agent served now (the holder `replaceAgent` updates). */
  served: { current: ServedAgent }
  engine: TaskEngine
  settings: AppSettings
  /** The streams open at once, over every binding (`maxStreams`). */
  streams: StreamLimit
  /** What the app has written that its clients have not read yet (`maxPendingResponseBytes`, `writeTimeoutMs`). */
  outgoing: Outgoing
  logger: Logger
  /** The agent's HTTP address as its cards give it (`publicUrl`, else where it listens), once known. */
  url(): string | undefined
  /** The gRPC binding listens at `host:port`: the A2A cards list it from their next request on. */
  announceGrpc(address: string | undefined): void
}

const internalsOf = new WeakMap<A2AApp, AppInternals>()

export function keepInternals(app: A2AApp, internals: AppInternals): void {
  internalsOf.set(app, internals)
}

/** The internals of an app `createA2AApp` made (undefined for any other object). */
export const appInternals = (app: A2AApp): AppInternals | undefined => internalsOf.get(app)

/**
 * The credential check of the agent `app` serves now, undefined when its card declares no authentication: `a2a
 * dev`'s inspector checks its page's credential with it, so it is checked exactly as a JSON-RPC request is.
 */
export const authCheckOf = (app: A2AApp): AuthCheck | undefined => internalsOf.get(app)?.served.current.authCheck
