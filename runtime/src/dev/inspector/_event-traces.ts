import type { TaskTrace } from './wire.js'

/** Tasks whose traces are kept; past it, the tasks least recently changed are forgotten first. */
const MAX_TASKS = 10_000
/** Traces kept per task (a follow-up or a cancel starts another); past it, the oldest go. */
const MAX_TRACES_PER_TASK = 16

/** What tells the trace of the active context: the app's instrumentation (`currentTrace()` of telemetry/_hooks). */
export interface TraceSource {
  currentTrace(): { readonly traceId: string } | undefined
}

/**
 * Which trace made each event of the dev store's tasks, as runs of events (a trace changes only when another
 * operation, a follow-up or a cancel, makes the next event). Asked where the store receives an event, which runs in
 * the context of the operation that made it. Without a source (the agent runs without telemetry) nothing is
 * asked or kept. Bounded in tasks and in traces per task.
 */
export class EventTraces {
  /** In the order of their latest change: the bound drops from the front. */
  readonly #tasks = new Map<string, TaskTrace[]>()

  /** Set once the app is made, when it has an instrumentation. */
  source: TraceSource | undefined

  created(taskId: string): void {
    this.#tasks.delete(taskId)
    this.appended(taskId, 0)
  }

  /** Notes the trace event `seq` of the task was made in; true when it differs from the previous event's. */
  appended(taskId: string, seq: number): boolean {
    const source = this.source
    if (!source) return false
    const traceId = source.currentTrace()?.traceId
    const traces = this.#tasks.get(taskId)
    if (!traces) {
      // A task's first events made outside any trace say nothing: the page shows no trace for them.
      if (traceId === undefined) return false
      this.#tasks.set(taskId, [{ firstSeq: seq, traceId }])
      if (this.#tasks.size > MAX_TASKS) this.#tasks.delete(this.#tasks.keys().next().value!)
      return true
    }
    this.#tasks.delete(taskId)
    this.#tasks.set(taskId, traces)
    if (traces.at(-1)!.traceId === traceId) return false
    traces.push(traceId === undefined ? { firstSeq: seq } : { firstSeq: seq, traceId })
    if (traces.length > MAX_TRACES_PER_TASK) traces.shift()
    return true
  }

  /** The task's traces, oldest first; undefined when none is known. */
  of(taskId: string): TaskTrace[] | undefined {
    return this.#tasks.get(taskId)
  }
}
