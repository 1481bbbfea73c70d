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

/**
 * Points an app's instrumentation at what it measures: its store's I/O, its counts, budgets and refusals. The
 * function returned stops the observing (the app closed).
 */
export function instrumentApp(instrumentation: Instrumentation, store: object, budgets: AppBudgets): () => void {
  watchStore(store, instrumentation)
  return instrumentation.observe(appSources(budgets))
}

/** The app's counts, byte budgets and refusals, each budget named by the option that sets it. */
function appSources({ engine, bodyBudget, outgoing, streams }: AppBudgets): ObservedSources {
  const { maxPendingResponseBytes } = outgoing.limits
  return {
    runningTasks: () => engine.runningCount,
    openStreams: () => streams.openCount,
    budgets: [
      { name: 'maxRunningBytes', used: () => engine.runningBytes, limit: engine.byteLimits.maxRunningBytes },
      { name: 'maxBodyBytesInFlight', used: () => bodyBudget.inFlight, limit: bodyBudget.max },
      { name: 'maxPendingResponseBytes', used: () => outgoing.pendingBytes, limit: maxPendingResponseBytes },
    ],
    refusals: [
      { name: 'maxRunningTasks', count: () => engine.tasksRefused },
      { name: 'maxRunningBytes', count: () => engine.runningBytesRefused },
      { name: 'maxBodyBytesInFlight', count: () => bodyBudget.refused },
      { name: 'maxPendingResponseBytes', count: () => outgoing.refused },
      { name: 'maxStreamBacklogBytes', count: () => outgoing.backlogCuts },
      { name: 'maxStreams', count: () => streams.refused },
    ],
  }
}
