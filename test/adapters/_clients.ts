import { Role, TaskState } from '@a2a-js/sdk'
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client'
import { A2AClient as A2AClientV03 } from 'a2a-sdk-v03/client'
import { rpc } from '../_rpc.ts'
import { readEvents } from '../runtime/_sse.ts'

/**
 * One streamed turn as each kind of client sees it, in common words: the text chunks of the answer in the order
 * they came, whether each was marked the last, the states the task went through, the progress (`working`) updates
 * with their parts, and the ids. The platform dialect is read raw; A2A v1.0 and v0.3 through the official
 * @a2a-js/sdk clients.
 */
export interface StreamedTurn {
  taskId: string
  contextId: string
  chunks: string[]
  lastChunk: boolean[]
  states: string[]
  /** The parts of each status update that carried a message, as the platform shapes them (`kind`, `text`, `data`). */
  updates: Array<{ state: string; parts: Array<{ kind: string; text?: string; data?: unknown }> }>
}

export interface TurnTarget {
  taskId?: string
  contextId?: string
}

export type Dialect = 'platform' | 'a2a-1.0' | 'a2a-0.3'
export const dialects: Dialect[] = ['platform', 'a2a-1.0', 'a2a-0.3']

export function streamTurn(
  dialect: Dialect,
  url: string,
  text: string,
  target: TurnTarget = {},
): Promise<StreamedTurn> {
  if (dialect === 'platform') return platformTurn(url, text, target)
  if (dialect === 'a2a-1.0') return v1Turn(url, text, target)
  return v03Turn(url, text, target)
}

let count = 0
const messageId = () => `adapter-${++count}-${Math.random().toString(36).slice(2, 8)}`

async function platformTurn(url: string, text: string, target: TurnTarget): Promise<StreamedTurn> {
  const message = { kind: 'message', role: 'user', messageId: messageId(), parts: [{ kind: 'text', text }], ...target }
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: { message } }),
  })
  const { events } = await readEvents(response)
  const turn: StreamedTurn = { taskId: '', contextId: '', chunks: [], lastChunk: [], states: [], updates: [] }
  // The platform's stream is JSON-RPC notifications: tasks/statusUpdate and tasks/artifactUpdate, the event in params.
  for (const { method, params } of events) {
    turn.taskId ||= params.taskId
    turn.contextId ||= params.contextId
    if (method === 'tasks/artifactUpdate') {
      for (const part of params.artifact.parts) turn.chunks.push(part.text)
      turn.lastChunk.push(params.artifact.lastChunk === true || params.lastChunk === true)
    } else if (method === 'tasks/statusUpdate') {
      turn.states.push(params.status.state)
      if (params.status.message) turn.updates.push({ state: params.status.state, parts: params.status.message.parts })
    }
  }
  return turn
}

const V1_STATES: Record<number, string> = {
  [TaskState.TASK_STATE_SUBMITTED]: 'submitted',
  [TaskState.TASK_STATE_WORKING]: 'working',
  [TaskState.TASK_STATE_INPUT_REQUIRED]: 'input-required',
  [TaskState.TASK_STATE_COMPLETED]: 'completed',
  [TaskState.TASK_STATE_CANCELED]: 'canceled',
  [TaskState.TASK_STATE_FAILED]: 'failed',
  [TaskState.TASK_STATE_REJECTED]: 'rejected',
}

const v1Part = (part: any) =>
  part.content.$case === 'text'
    ? { kind: 'text', text: part.content.value }
    : part.content.$case === 'data'
      ? { kind: 'data', data: part.content.value }
      : { kind: 'file' }

async function v1Turn(url: string, text: string, target: TurnTarget): Promise<StreamedTurn> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory()] }),
  )
  const client = await factory.createFromUrl(url)
  const request = {
    tenant: '',
    metadata: {},
    configuration: undefined,
    message: {
      messageId: messageId(),
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: 'text' as const, value: text },
          metadata: undefined,
          filename: '',
          mediaType: 'text/plain',
        },
      ],
      taskId: target.taskId ?? '',
      contextId: target.contextId ?? '',
      extensions: [],
      metadata: {},
      referenceTaskIds: [],
    },
  }
  const turn: StreamedTurn = { taskId: '', contextId: '', chunks: [], lastChunk: [], states: [], updates: [] }
  for await (const event of client.sendMessageStream(request as any)) {
    const { $case, value } = (event as any).payload
    turn.taskId ||= value.taskId ?? value.id ?? ''
    turn.contextId ||= value.contextId ?? ''
    if ($case === 'artifactUpdate') {
      for (const part of value.artifact.parts) turn.chunks.push(part.content.value)
      turn.lastChunk.push(value.lastChunk === true)
    } else if ($case === 'statusUpdate') {
      const state = V1_STATES[value.status.state] ?? String(value.status.state)
      turn.states.push(state)
      if (value.status.message) turn.updates.push({ state, parts: value.status.message.parts.map(v1Part) })
    }
  }
  return turn
}

async function v03Turn(url: string, text: string, target: TurnTarget): Promise<StreamedTurn> {
  // A platform-dialect agent answers a 0.3 client in 0.3 when the client says so (A2A-Version), as 0.3 SDKs can be set
  // to.
  const fetchImpl: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'A2A-Version': '0.3' } })
  const client = await A2AClientV03.fromCardUrl(`${url}.well-known/agent-card.json`, { fetchImpl })
  const message = {
    kind: 'message' as const,
    messageId: messageId(),
    role: 'user' as const,
    parts: [{ kind: 'text' as const, text }],
    ...target,
  }
  const turn: StreamedTurn = { taskId: '', contextId: '', chunks: [], lastChunk: [], states: [], updates: [] }
  for await (const event of client.sendMessageStream({ message })) {
    const result = event as any
    turn.taskId ||= result.taskId ?? result.id
    turn.contextId ||= result.contextId
    if (result.kind === 'artifact-update') {
      for (const part of result.artifact.parts) turn.chunks.push(part.text)
      turn.lastChunk.push(result.lastChunk === true)
    } else if (result.kind === 'status-update') {
      turn.states.push(result.status.state)
      if (result.status.message) turn.updates.push({ state: result.status.state, parts: result.status.message.parts })
    }
  }
  return turn
}

/** Sends a platform `message/send` (answered when the turn settles) and returns the task. */
export async function sendTurn(
  url: string,
  text: string,
  target: TurnTarget = {},
  options: { returnImmediately?: boolean } = {},
): Promise<any> {
  const message = { kind: 'message', role: 'user', messageId: messageId(), parts: [{ kind: 'text', text }], ...target }
  const configuration = options.returnImmediately ? { blocking: false } : undefined
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message, ...(configuration && { configuration }) },
    }),
  })
  const body = await response.json()
  if (body.error) throw new Error(`message/send failed: ${JSON.stringify(body.error)}`)
  return body.result
}

export async function rpcBody(url: string, method: string, params: unknown): Promise<any> {
  return (await rpc(url, method, params)).body
}
