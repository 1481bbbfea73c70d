// The echo agent of the runtime rows (_echo-agent.mjs) as a Cloudflare Worker, run by `wrangler dev` (workerd):
// every request goes to the agent's Durable Object (AgentObject, bound as AGENT in worker/wrangler.jsonc), which runs
// it
// and keeps its tasks in its storage, as agentWorker serves any agent there.
import { agentWorker } from '../../runtime/dist/entries/workers.js'
import { defineAgent } from '../../runtime/dist/index.js'
import { echoDefinition, silentLogger } from './_echo-agent.mjs'

const { worker, AgentObject } = agentWorker(defineAgent(echoDefinition), { logger: silentLogger })

export { AgentObject }
export default worker
