// biome-ignore-all assist/source/organizeImports: grouped by what a reader looks for, not by path
// `a2a-runtime/workers`: the agent as a Cloudflare Worker, its tasks in a Durable Object.
export { agentWorker } from '../workers/agent-worker.js'
export type { AgentWorker, AgentWorkerOptions, DurableObjectStateLike } from '../workers/agent-worker.js'
export { createDurableObjectStore } from '../stores/durable-object.js'
export type { DurableObjectStorageLike, DurableObjectStoreOptions } from '../stores/durable-object.js'
