// The agent as a Cloudflare Worker: every request goes to the agent's Durable Object (AgentObject, bound as AGENT in
// wrangler.jsonc), which runs it and keeps its tasks in its storage, so a task sent on one request is there on the
// next.
import { agentWorker } from 'a2a-runtime/workers'
import agent from './agent.ts'

const { worker, AgentObject } = agentWorker(agent)

export { AgentObject }
export default worker
