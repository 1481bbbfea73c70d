import type { TaskStore } from '../../stores/task-store.js'
import { EventClock } from './_event-clock.js'
import { EventTraces } from './_event-traces.js'
import { reportingStates } from './_task-feed.js'
import type { Inspector } from './inspector.js'

/**
 * The task feed of several agents' inspectors: their agents share one store, so one wrapper of it notes each task's
 * event times and traces (task ids are unique across agents) and tells every inspector of each change, each passing
 * on only its own agent's tasks (`Inspector.taskChanged`).
 */
export class InspectorFeed {
  readonly clock = new EventClock()
  readonly traces = new EventTraces()
  readonly #inspectors = new Set<Inspector>()

  observe(store: TaskStore): TaskStore {
    return reportingStates(
      store,
      (task) => {
        for (const inspector of this.#inspectors) inspector.taskChanged(task)
      },
      this.clock,
      this.traces,
    )
  }

  add(inspector: Inspector): void {
    this.#inspectors.add(inspector)
  }
}
