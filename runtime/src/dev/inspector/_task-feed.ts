import type { TaskStore } from '../../stores/task-store.js'
import type { Task } from '../../types.js'
import type { EventClock } from './_event-clock.js'
import type { EventTraces } from './_event-traces.js'
import type { TaskLine } from './wire.js'

const TITLE_CHARS = 80

/** The task's line; `traces` adds the traces of its events when there are any. */
export function taskLine(task: Task, traces?: EventTraces): TaskLine {
  const first = task.history.find((message) => message.role === 'user')
  const text = first?.parts.find((part) => part.kind === 'text')
  const line: TaskLine = {
    id: task.id,
    contextId: task.contextId,
    state: task.status.state,
    at: task.status.timestamp,
    title: text?.kind === 'text' ? text.text.slice(0, TITLE_CHARS) : '',
  }
  const known = traces?.of(task.id)
  if (known) line.traces = known
  return line
}

/**
 * The dev server's store, reporting every new task and every status change (not each artifact chunk) once the
 * store has it, so the inspector's task list is live, and noting on `clock` when each task and event came, and on
 * `traces` which trace made it (an event made in another trace than the one before is reported too, so the page
 * learns of the trace as its events arrive). Everything else goes to the store as it is.
 */
export function reportingStates(
  store: TaskStore,
  onChange: (task: Task) => void,
  clock: EventClock,
  traces: EventTraces,
): TaskStore {
  const after = (done: unknown, task: Task) => {
    if (done instanceof Promise) return done.then(() => onChange(task))
    onChange(task)
    return undefined
  }
  // The owner goes through: without it every task under a2a dev would be nobody's, seen by no caller.
  const create = (task: Task, owner?: string) => {
    clock.created(task.id)
    traces.created(task.id)
    return after(store.create(task, owner), task)
  }
  const append = (task: Task, event: Parameters<TaskStore['append']>[1]) => {
    clock.appended(task.id, event.seq)
    const traceChanged = traces.appended(task.id, event.seq)
    const done = store.append(task, event)
    return event.kind === 'status-update' || traceChanged ? after(done, task) : done
  }
  // Other methods bound once, not at each call: the store's own fields stay private to it.
  const bound = new Map<PropertyKey, unknown>()
  return new Proxy(store, {
    get(target, key) {
      if (key === 'create') return create
      if (key === 'append') return append
      const value = Reflect.get(target, key, target)
      if (typeof value !== 'function') return value
      let method = bound.get(key)
      if (!method) {
        method = value.bind(target)
        bound.set(key, method)
      }
      return method
    },
  })
}
