import type { PushPayload } from '../push/_delivery.js'
import type { PushConfig } from '../push/push-config.js'
import type { Task, TaskEvent } from '../types.js'
import { eventToV1 } from './shared/_v1-shapes.js'
import { taskToV03 } from './shared/_v03-shapes.js'

/** What a webhook receives, in the shapes of the dialect its config was made in. */

const A2A_JSON = 'application/a2a+json'

/**
 * v1.0 webhooks get each update as a StreamResponse (`{statusUpdate}` / `{artifactUpdate}`), as a stream
 * would; v0.3 and platform ones get the whole Task as it stands, as v0.3 servers send it.
 */
export function renderPush(config: PushConfig, task: Task, event: TaskEvent): PushPayload {
  if (config.dialect === 'a2a-1.0') return { body: JSON.stringify(eventToV1(event)), contentType: A2A_JSON }
  return { body: JSON.stringify(taskToV03(task)), contentType: 'application/json' }
}
