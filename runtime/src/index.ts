// biome-ignore-all assist/source/organizeImports: grouped by what a reader looks for, not by path
// What an agent's author uses. Extras are subpaths: `a2a-runtime/workers`, `/file-store`, `/redis-store`, `/store`
// (a store of your own), `/ai-sdk`, `/mastra`, `/langgraph`. test/runtime/public-api.test.ts pins every list:
// adding an export is a decision, not an accident.

// Agent
export { defineAgent } from './agent.js'
export type { Agent, AgentCoreRequest, AgentDefinition, ExecutionContext, TaskHandle } from './agent.js'
export { TaskNotCancelableError, TaskTerminalError } from './errors.js'

// Serving
export { createA2AApp } from './http/app.js'
export type { A2AApp, A2AAppOptions } from './http/app.js'
export { serveAgent } from './node/serve.js'
export type { A2AServer, ServeOptions } from './node/serve.js'
// Several agents in one server, each at its own path
export { createAgentsApp } from './multi/agents-app.js'
export type { A2AAgentsApp, AgentEntry } from './multi/agents-app.js'
export { serveAgents } from './multi/serve-agents.js'
export type { A2AAgentsServer } from './multi/serve-agents.js'
export type { Logger } from './logger.js'

// Tasks in memory (the default store; the others are subpaths)
export { createMemoryStore } from './stores/memory.js'
export type { MemoryStoreOptions } from './stores/memory.js'

// Data model
export type { AgentCard, AgentSkill, Artifact, Message, Part, Principal, Task, TaskState } from './types.js'
