import type { TaskEngine } from '../core/_engine.js'
import type { BodyBudget } from '../http/_body-budget.js'
import type { Outgoing } from '../http/_outgoing.js'
import type { StreamLimit } from '../http/_stream-limit.js'
import type { Instrumentation, ObservedSources } from './_hooks.js'
import { watchStore } from './_store-calls.js'

/** What an app's instrumentation observes of it: read from its budget objects when metrics are collected. */
export interface AppBudgets {
  engine: TaskEngine
  bodyBudget: BodyBudget
  outgoing: Outgoing
  streams: StreamLimit
}

/** The same for a server of several agents: every agent's engine (read at each collection), the budgets they share. */
export interface AgentsBudgets extends Omit<AppBudgets, 'engine'> {
  engines(): Iterable<TaskEngine>
}

/**
 * Points an app's instrumentation at what it measures: its store's I/O, its counts, budgets and refusals. The
 * function returned stops the observing (the app closed).
 */
export function instrumentApp(instrumentation: Instrumentation, store: object, budgets: AppBudgets): () => void {
  const { engine, ...shared } = budgets
  const engines = [engine]
  return instrumentAgents(instrumentation, store, { ...shared, engines: () => engines })
}

/**
 * The same for a server of several agents, registered once for the process: the counts and budgets are the
 * server's, each agent's engine summed in (the A2A semantic conventions define spans only, no metric attribute that
 * would name an agent; a span names it as `a2a.tenant` and `gen_ai.agent.name`).
 */
export function instrumentAgents(instrumentation: Instrumentation, store: object, budgets: AgentsBudgets): () => void {
  watchStore(store, instrumentation)
  return instrumentation.observe(appSources(budgets))
}

/** The app's counts, byte budgets and refusals, each budget named by the option that sets it. */
function appSources({ engines, bodyBudget, outgoing, streams }: AgentsBudgets): ObservedSources {
  const { maxPendingResponseBytes } = outgoing.limits
  const sum = (read: (engine: TaskEngine) => number) => () => {
    let total = 0
    for (const engine of engines()) total += read(engine)
    return total
  }
  // Each agent's share of maxRunningBytes, together the server's.
  const maxRunningBytes = sum((engine) => engine.byteLimits.maxRunningBytes)()
  return {
    runningTasks: sum((engine) => engine.runningCount),
    openStreams: () => streams.openCount,
    budgets: [
      { name: 'maxRunningBytes', used: sum((engine) => engine.runningBytes), limit: maxRunningBytes },
      { name: 'maxBodyBytesInFlight', used: () => bodyBudget.inFlight, limit: bodyBudget.max },
      { name: 'maxPendingResponseBytes', used: () => outgoing.pendingBytes, limit: maxPendingResponseBytes },
    ],
    refusals: [
      { name: 'maxRunningTasks', count: sum((engine) => engine.tasksRefused) },
      { name: 'maxRunningBytes', count: sum((engine) => engine.runningBytesRefused) },
      { name: 'maxBodyBytesInFlight', count: () => bodyBudget.refused },
      { name: 'maxPendingResponseBytes', count: () => outgoing.refused },
      { name: 'maxStreamBacklogBytes', count: () => outgoing.backlogCuts },
      { name: 'maxStreams', count: () => streams.refused },
    ],
  }
}
