/**
 * The path of the agent the page inspects, with its trailing slash: the page lives at `<base>__a2a/`, so `/` for the
 * dev server's one agent and `/planner/` for one of a folder of agents. Its card, its JSON-RPC endpoint and the
 * inspector's own feed are all below it.
 */
export const AGENT_BASE = `${location.pathname.slice(0, Math.max(0, location.pathname.indexOf('/__a2a/')))}/`
