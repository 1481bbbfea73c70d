import type { Task } from '../types.js'
import type { Json } from './shared/_params.js'
import { artifactToV1, messageToV1, statusToV1 } from './shared/_v1-shapes.js'

/** A Task in A2A v1.0 ProtoJSON, as much of it as the request asks for. */

export interface TaskView {
  /** Keep only the newest messages; 0 leaves history out. */
  historyLength?: number
  /** ListTasks leaves artifacts out unless asked. */
  includeArtifacts?: boolean
}

export function taskToV1(task: Task, view: TaskView = {}): Json {
  const out: Json = { id: task.id, contextId: task.contextId, status: statusToV1(task.status) }
  if (view.includeArtifacts !== false && task.artifacts.length) out.artifacts = task.artifacts.map(artifactToV1)
  const history =
    view.historyLength === undefined
      ? task.history
      : view.historyLength === 0
        ? []
        : task.history.slice(-view.historyLength)
  if (history.length) out.history = history.map(messageToV1)
  if (task.metadata) out.metadata = task.metadata
  return out
}
