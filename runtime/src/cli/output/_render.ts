import type {
  AgentCard,
  JsonObject,
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  Message,
  SendMessageResponse,
  Task,
  TaskPushNotificationConfig,
} from '../../client/types.js'
import { INTERRUPTED_STATES, type TaskState } from '../../client/types.js'
import { appendParts, artifactTitle, roleOf } from './_parts.js'
import { shellWord } from './_sanitize.js'
import type { TextWriter } from './_text-writer.js'

/**
 * The documents of the `text` format. Labels are stable (scripts read them); fields come first, then blocks.
 *
 * Fields: `Task` (id), `Context` (context id), `State` (the wire value without `TASK_STATE_`; one this tool does not
 * know as received), `Resume` (the command answering an interrupted task), `Follow` (the command waiting for a task
 * still at work), `Updated` and `Metadata` (--verbose), `Tasks` (how many on this page), `Total`, `Next page` (the
 * page token of the next page), `Push config` (its id), `URL`, `Token` (always `[redacted]`), `Authentication`
 * (its scheme), `Deleted`; a card's `Agent`, `Description`, `Version`, `Interface`, `Streaming`,
 * `Push notifications`, `Extended card`, `Security`, `Skill`, `Input modes`, `Output modes`.
 * Blocks: `Message` (what the agent said: a task's status message, or its direct reply), `Artifact` (name and id),
 * `History` (user|agent: a past turn of `task get --history`), `Card` (--verbose: the whole card as JSON).
 * In a block's content, parts: text as is, data as indented JSON, a file as `File: <name> (<media type>, <n> bytes)`
 * or `File: <name> (<media type>, <url>)`; --verbose heads each part with `Part: <kind> (<media type>)` and its
 * `Metadata:`.
 */
export interface RenderContext {
  verbose: boolean
  /** The `--agent-card` the caller gave, repeated in the commands printed; none when the default agent was used. */
  agentRef?: string
}

const KNOWN_STATES: ReadonlySet<string> = new Set<TaskState>([
  'TASK_STATE_UNSPECIFIED',
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
])

/** A state as printed: `COMPLETED` for `TASK_STATE_COMPLETED`; a value A2A v1.0 does not define, as received. */
export function stateLabel(state: string | undefined): string {
  if (typeof state !== 'string') return '(none)'
  return KNOWN_STATES.has(state) ? state.slice('TASK_STATE_'.length) : state
}

/** The exact command answering the interrupted task `taskId`. */
function resumeCommand(taskId: string, agentRef: string | undefined): string {
  return `a2a send${agentOption(agentRef)} --task-id ${shellWord(taskId)} --text "<reply>"`
}

/** The exact command waiting for the task `taskId` to end or stop for input. */
function followCommand(taskId: string, agentRef: string | undefined): string {
  return `a2a task get${agentOption(agentRef)} --wait ${shellWord(taskId)}`
}

const agentOption = (agentRef: string | undefined) =>
  agentRef === undefined ? '' : ` --agent-card ${shellWord(agentRef)}`

export interface TaskFacts {
  taskId?: string
  contextId?: string
  state?: string
}

/** `Task`, `Context`, `State`, and the command to go on with (`Resume` when interrupted, `Follow` while at work). */
export function taskFields(writer: TextWriter, facts: TaskFacts, context: RenderContext): void {
  if (facts.taskId !== undefined) writer.field('Task', facts.taskId)
  if (facts.contextId !== undefined) writer.field('Context', facts.contextId)
  if (facts.taskId === undefined) return
  writer.field('State', stateLabel(facts.state))
  const state = facts.state as TaskState
  if (INTERRUPTED_STATES.has(state)) writer.field('Resume', resumeCommand(facts.taskId, context.agentRef))
  else if (state === 'TASK_STATE_SUBMITTED' || state === 'TASK_STATE_WORKING')
    writer.field('Follow', followCommand(facts.taskId, context.agentRef))
}

export function renderTask(writer: TextWriter, task: Task, context: RenderContext): void {
  taskFields(writer, { taskId: task.id, contextId: task.contextId, state: task.status?.state }, context)
  if (context.verbose) {
    if (task.status?.timestamp) writer.field('Updated', task.status.timestamp)
    if (task.metadata !== undefined) writer.field('Metadata', JSON.stringify(task.metadata))
  }
  if (task.status?.message) messageBlock(writer, 'Message', task.status.message, context)
  for (const artifact of task.artifacts ?? []) {
    writer.openBlock('Artifact', artifactTitle(artifact))
    appendParts(writer, artifact.parts ?? [], context.verbose)
    writer.closeBlock()
  }
  for (const message of task.history ?? []) messageBlock(writer, 'History', message, context, roleOf(message))
}

/** A direct reply: its context (and task, when it names one) and the message. */
export function renderMessage(writer: TextWriter, message: Message, context: RenderContext): void {
  if (message.taskId !== undefined) writer.field('Task', message.taskId)
  if (message.contextId !== undefined) writer.field('Context', message.contextId)
  messageBlock(writer, 'Message', message, context)
}

export function messageBlock(
  writer: TextWriter,
  label: string,
  message: Message,
  context: RenderContext,
  value?: string,
): void {
  writer.openBlock(label, value)
  if (context.verbose && message.metadata !== undefined)
    writer.append(`Metadata: ${JSON.stringify(message.metadata)}\n`)
  appendParts(writer, message.parts ?? [], context.verbose)
  writer.closeBlock()
}

export function renderSendResponse(writer: TextWriter, response: SendMessageResponse, context: RenderContext): void {
  if (response.task) renderTask(writer, response.task, context)
  else if (response.message) renderMessage(writer, response.message, context)
}

export function renderTaskList(writer: TextWriter, list: ListTasksResponse, context: RenderContext): void {
  for (const task of list.tasks ?? []) {
    renderTask(writer, task, context)
    writer.separate()
  }
  writer.field('Tasks', (list.tasks ?? []).length)
  if (typeof list.totalSize === 'number') writer.field('Total', list.totalSize)
  if (list.nextPageToken) writer.field('Next page', list.nextPageToken)
}

export function renderPushConfig(writer: TextWriter, config: TaskPushNotificationConfig): void {
  if (config.taskId !== undefined) writer.field('Task', config.taskId)
  if (config.id !== undefined) writer.field('Push config', config.id)
  writer.field('URL', config.url)
  if (config.token) writer.field('Token', '[redacted]')
  if (config.authentication?.scheme) writer.field('Authentication', config.authentication.scheme)
}

export function renderPushConfigList(writer: TextWriter, list: ListTaskPushNotificationConfigsResponse): void {
  for (const config of list.configs ?? []) {
    renderPushConfig(writer, config)
    writer.separate()
  }
  writer.field('Push configs', (list.configs ?? []).length)
  if (list.nextPageToken) writer.field('Next page', list.nextPageToken)
}

export function renderPushConfigDeleted(writer: TextWriter, deleted: { taskId: string; id: string }): void {
  writer.field('Task', deleted.taskId)
  writer.field('Push config', deleted.id)
  writer.field('Deleted', 'yes')
}

export function renderCard(writer: TextWriter, card: AgentCard, context: RenderContext): void {
  writer.field('Agent', String(card.name ?? ''))
  if (card.description) writer.field('Description', String(card.description))
  if (card.version) writer.field('Version', String(card.version))
  for (const face of card.supportedInterfaces ?? []) {
    const tenant = face.tenant ? ` (tenant ${face.tenant})` : ''
    writer.field('Interface', `${face.protocolBinding} ${face.protocolVersion} ${face.url}${tenant}`)
  }
  const capabilities = card.capabilities ?? {}
  writer.field('Streaming', yesNo(capabilities.streaming))
  writer.field('Push notifications', yesNo(capabilities.pushNotifications))
  writer.field('Extended card', yesNo(capabilities.extendedAgentCard))
  for (const [name, scheme] of Object.entries(card.securitySchemes ?? {}))
    writer.field('Security', `${name} (${describeScheme(scheme)})`)
  for (const skill of card.skills ?? []) {
    const { id, name } = skill as { id?: unknown; name?: unknown }
    writer.field('Skill', name && name !== id ? `${String(id)} (${String(name)})` : String(id))
  }
  if (card.defaultInputModes?.length) writer.field('Input modes', card.defaultInputModes.join(', '))
  if (card.defaultOutputModes?.length) writer.field('Output modes', card.defaultOutputModes.join(', '))
  if (context.verbose) writer.block('Card', undefined, JSON.stringify(card, null, 2))
}

const yesNo = (value: unknown) => (value === true ? 'yes' : 'no')

/** A security scheme in a few words: its kind and where its credential goes. */
function describeScheme(scheme: JsonObject): string {
  const [kind, body] = (Object.entries(scheme)[0] ?? []) as [string | undefined, JsonObject | undefined]
  const details = body ?? {}
  switch (kind) {
    case 'httpAuthSecurityScheme':
      return `HTTP ${String(details.scheme ?? '')}`.trim()
    case 'apiKeySecurityScheme':
      return `API key in ${String(details.location ?? '?')} ${String(details.name ?? '')}`.trim()
    case 'oauth2SecurityScheme':
      return 'OAuth 2.0'
    case 'openIdConnectSecurityScheme':
      return 'OpenID Connect'
    case 'mtlsSecurityScheme':
      return 'mutual TLS'
    default:
      return kind ?? 'unknown'
  }
}
