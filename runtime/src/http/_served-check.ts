import type { AuthCheck } from './_auth.js'
import type { ServedAgent } from './_served-agent.js'
import type { A2AApp } from './app-options.js'

/** The agent each app serves now, kept beside the app rather than on it: `A2AApp` is public and stays as it is. */
const servedBy = new WeakMap<A2AApp, { current: ServedAgent }>()

/** Notes which agent `app` serves (the holder `replaceAgent` updates). */
export function keepServed(app: A2AApp, served: { current: ServedAgent }): void {
  servedBy.set(app, served)
}

/**
 * The credential check of the agent `app` serves now, undefined when its card declares no authentication: `a2a
 * dev`'s inspector checks its page's credential with it, so it is checked exactly as a JSON-RPC request is.
 */
export const authCheckOf = (app: A2AApp): AuthCheck | undefined => servedBy.get(app)?.current.authCheck
