import { randomUUID } from 'node:crypto'
import { createInterface } from 'node:readline/promises'
import type { Command } from 'commander'
import { isObject } from '../_is-object.js'
import { isTerminal } from '../core/_lifecycle.js'
import type { Message, Part, Task, TaskStatus } from '../types.js'
import {
  CredentialsRefused,
  clientHeaders,
  credentialsRefused,
  readJson,
  redirectTarget,
  refusalMessage,
  unreachable,
} from './_client.js'
import { ProjectError } from './_errors.js'
import { chooseAgent } from './_local-agent.js'
import { createSendOutput, type SendOutput } from './_send-output.js'

interface SendFlags {
  url?: string
  stream?: boolean
  context?: string
  task?: string
  skill?: string
  token?: string
  apiKey?: string
  json?: boolean
}

interface Turn {
  /** Absent when the agent answered with a message rather than a task. */
  taskId?: string
  contextId: string
  status: TaskStatus
}

export function registerSend(program: Command): void {
  program
    .command('send')
    .description('Send a message to an A2A agent and print its answer as it arrives')
    .argument('<text>', 'the message')
    .option('--url <url>', "the agent (default: this project's running a2a dev; PORT in the environment overrides it)")
    .option('--stream', 'stream the answer (default when the card allows it)')
    .option('--no-stream', 'wait for the whole answer')
    .option('--context <id>', 'continue a conversation')
    .option('--task <id>', 'answer a task waiting for input')
    .option('--skill <id>', 'ask a particular skill (metadata.skillId)')
    .option('--token <token>', 'bearer token (default: A2A_BEARER_TOKEN)')
    .option('--api-key <key>', 'API key (default: A2A_API_KEY)')
    .option('--json', 'print the raw JSON-RPC results and events, one per line')
    .action((text: string, flags: SendFlags) => send(text, flags))
}

async function send(firstText: string, flags: SendFlags): Promise<void> {
  const { base, via } = await chooseAgent(process.cwd(), flags.url)
  const headers: Record<string, string> = { 'content-type': 'application/json', ...clientHeaders(base, flags) }

  // Starting the dev server is the fix only when it is the agent addressed: not for one the user named.
  const card = await fetchCard(
    base,
    flags.url === undefined ? 'is the agent running? start it with `npm run dev`' : 'is the agent running there?',
  )
  const streaming = flags.stream ?? card.capabilities?.streaming === true
  if (flags.stream && card.capabilities?.streaming !== true)
    throw new ProjectError(
      `${card.name ?? 'The agent'} does not stream (capabilities.streaming is not true); drop --stream`,
    )
  const endpoint = base.href
  const output = createSendOutput()
  const log = (line: string) => !flags.json && output.note(line)
  const notes = [via, streaming && 'streaming'].filter(Boolean).join(', ')
  log(`→ ${card.name ? `${card.name} at ` : ''}${endpoint}${notes ? ` (${notes})` : ''}`)
  try {
    await converse(firstText, flags, endpoint, headers, streaming, output, log)
  } catch (error) {
    if (!(error instanceof CredentialsRefused)) throw error
    const sent = 'authorization' in headers || 'x-api-key' in headers
    const schemes = card.authentication?.schemes
    throw new ProjectError(refusalMessage(error, sent, Array.isArray(schemes) ? schemes : []))
  } finally {
    if (!flags.json) output.finish()
  }
}

async function converse(
  firstText: string,
  flags: SendFlags,
  endpoint: string,
  headers: Record<string, string>,
  streaming: boolean,
  output: SendOutput,
  log: (line: string) => void,
): Promise<void> {
  let text = firstText
  let taskId = flags.task
  let contextId = flags.context
  for (;;) {
    const message = {
      role: 'user',
      messageId: randomUUID(),
      parts: [{ kind: 'text', text }],
      ...(taskId && { taskId }),
      ...(contextId && { contextId }),
      ...(flags.skill && { metadata: { skillId: flags.skill } }),
    }
    const params = { message, ...(contextId && { metadata: { contextId } }) }
    const turn = streaming
      ? await streamTurn(endpoint, headers, params, flags, output)
      : await sendTurn(endpoint, headers, params, flags.json === true)
    taskId = turn.taskId
    contextId = turn.contextId
    const question = textOf(turn.status.message?.parts)
    if (turn.status.state === 'input-required' || turn.status.state === 'auth-required') {
      log(`? ${question || turn.status.state}`)
      if (!process.stdin.isTTY || flags.json) {
        log(`  answer with: ${continueCommand('"<answer>"', taskId ?? '', flags)}`)
        return
      }
      const prompt = createInterface({ input: process.stdin, output: process.stderr })
      text = await prompt.question('> ')
      prompt.close()
      continue
    }
    log(
      `${turn.status.state === 'completed' ? '✓' : '✗'} ${turn.status.state}${question ? `: ${question}` : ''} (${taskId ? `task ${taskId}` : 'a message, no task'})`,
    )
    process.exitCode = turn.status.state === 'completed' ? 0 : 1
    return
  }
}

async function fetchCard(base: URL, unreachableHint: string): Promise<AgentCardSeen> {
  const url = new URL('.well-known/agent.json', base).href
  let response: Response
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(10_000) })
  } catch (error) {
    throw unreachable(url, error, unreachableHint)
  }
  if (!response.ok) throw new ProjectError(`${url} answered HTTP ${response.status}: is this an A2A agent?`)
  const card = await readJson(response, `The card at ${url}`)
  if (!isObject(card)) throw new ProjectError(`The card at ${url} is not a JSON object`)
  return card as AgentCardSeen
}

/** What `a2a send` reads of the card, each field checked where it is used. */
interface AgentCardSeen {
  name?: string
  capabilities?: { streaming?: boolean }
  authentication?: { schemes?: unknown }
}

/** One JSON-RPC call: a stream comes back as the Response, anything else as its parsed `result`. */
async function rpc(
  endpoint: string,
  headers: Record<string, string>,
  method: string,
  params: unknown,
): Promise<Response | unknown> {
  let response: Response
  try {
    // Not followed: the credentials would go along to wherever the redirect points.
    response = await fetch(endpoint, {
      method: 'POST',
      headers,
      redirect: 'manual',
      body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
    })
  } catch (error) {
    throw unreachable(endpoint, error, 'is the agent still running?')
  }
  const target = redirectTarget(response, endpoint)
  if (target) {
    await response.body?.cancel()
    throw new ProjectError(
      `${endpoint} redirected ${method} to ${target} (HTTP ${response.status}); not followed, so no message or credentials went there: pass --url ${target} if that is the agent`,
    )
  }
  if (response.status === 401 || response.status === 403) throw await credentialsRefused(response)
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) return response
  const body = (await readJson(response, `The answer to ${method}`)) as {
    result?: unknown
    error?: { code: number; message: string }
  }
  if (body?.error) throw new ProjectError(`The agent answered error ${body.error.code}: ${body.error.message}`)
  if (!response.ok || body?.result === undefined)
    throw new ProjectError(`The agent answered HTTP ${response.status} without a result`)
  return body.result
}

async function sendTurn(
  endpoint: string,
  headers: Record<string, string>,
  params: unknown,
  json: boolean,
): Promise<Turn> {
  const answer = (await rpc(endpoint, headers, 'message/send', params)) as Task | Message
  if (json) process.stdout.write(`${JSON.stringify(answer)}\n`)
  // An agent on the A2A v0.3 dialect may answer with a message: the reply, and no task.
  if (answer.kind === 'message') {
    if (!json) process.stdout.write(`${textOf(answer.parts)}\n`)
    return { contextId: answer.contextId ?? '', status: { state: 'completed', timestamp: new Date().toISOString() } }
  }
  if (!json) for (const artifact of answer.artifacts) process.stdout.write(`${textOf(artifact.parts)}\n`)
  return { taskId: answer.id, contextId: answer.contextId, status: answer.status }
}

async function streamTurn(
  endpoint: string,
  headers: Record<string, string>,
  params: unknown,
  flags: SendFlags,
  output: SendOutput,
): Promise<Turn> {
  const json = flags.json === true
  const response = await rpc(endpoint, headers, 'message/stream', params)
  if (!(response instanceof Response) || !response.body)
    throw new ProjectError('The agent answered message/stream without a stream')
  const body = response.body as AsyncIterable<Uint8Array>
  const decoder = new TextDecoder()
  let buffer = ''
  let turn: Turn | undefined
  try {
    await readEvents()
  } catch (error) {
    if (error instanceof ProjectError) throw error
    // The connection died mid-stream (the agent stopped, a proxy dropped it): say so, not undici's stack.
    throw streamCut(endpoint, turn, flags, describeCause(error))
  }
  if (!turn) throw new ProjectError('The stream ended without a status')
  // Closed before the task ended or asked for something: as cut as a reset connection.
  if (!isTerminal(turn.status.state) && !isInterrupted(turn.status.state))
    throw streamCut(endpoint, turn, flags, 'the agent closed it')
  return turn

  async function readEvents(): Promise<void> {
    for await (const chunk of body) {
      buffer += decoder.decode(chunk, { stream: true })
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const data = frame.split('\n').find((line) => line.startsWith('data:'))
        if (!data) continue
        const event = parseEvent(data.slice(5).trim()) as {
          method?: string
          // biome-ignore lint/suspicious/noExplicitAny: the agent's JSON, each field read where it is used
          params?: any
          error?: { code: number; message: string }
        }
        if (json) process.stdout.write(`${JSON.stringify(event)}\n`)
        if (event.error) throw new ProjectError(`The agent answered error ${event.error.code}: ${event.error.message}`)
        const { taskId, contextId } = event.params ?? {}
        if (event.method === 'tasks/artifactUpdate' && !json) {
          output.answer(textOf(event.params.artifact.parts))
          if (event.params.artifact.lastChunk !== false) output.endLine()
        }
        if (event.method === 'tasks/statusUpdate') {
          const status = event.params.status as TaskStatus
          turn = { taskId, contextId, status }
          const progress = textOf(status.message?.parts)
          if (status.state === 'working' && progress && !json) output.progress(progress)
          if (isTerminal(status.state) && !json) output.endLine()
        }
      }
    }
  }
}

function parseEvent(data: string): unknown {
  try {
    return JSON.parse(data)
  } catch {
    throw new ProjectError(`The agent streamed an event that is not JSON: ${JSON.stringify(data.slice(0, 80))}`)
  }
}

const isInterrupted = (state: TaskStatus['state']) => state === 'input-required' || state === 'auth-required'

/** A stream that ended before its task did: what happened, the task, and how to go on, in one line. */
function streamCut(endpoint: string, turn: Turn | undefined, flags: SendFlags, cause: string): ProjectError {
  const where = `The stream from ${endpoint} was cut (${cause})`
  if (!turn?.taskId)
    return new ProjectError(
      `${where} before the agent named a task: is the agent still running? send the message again`,
    )
  // `a2a send` cannot reattach to a stream (tasks/resubscribe): the task is continued with a new message.
  return new ProjectError(
    `${where} while task ${turn.taskId} was ${turn.status.state}: is the agent still running? once it is, go on with ${continueCommand('"<message>"', turn.taskId, flags)}`,
  )
}

/**
 * The command that sends `text` to the task, to the same agent with the same credential flags: what the user
 * pastes to go on. A credential shows as a placeholder, not its value: this line goes to stderr, which ends up
 * in CI logs, shared terminals and bug reports, and the user knows the token they just typed. (One taken from
 * A2A_BEARER_TOKEN / A2A_API_KEY needs no flag: the follow-up reads it again.)
 */
function continueCommand(text: string, taskId: string, flags: SendFlags): string {
  const url = flags.url ? ` --url ${flags.url}` : ''
  const token = flags.token !== undefined ? ' --token <your token>' : ''
  const apiKey = flags.apiKey !== undefined ? ' --api-key <your API key>' : ''
  return `a2a send ${text} --task ${taskId}${url}${token}${apiKey}`
}

/** Why a connection failed, in words: undici's "terminated" says less than its cause ("other side closed"). */
function describeCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  return cause?.message ?? cause?.code ?? (error as Error).message ?? String(error)
}

const textOf = (parts: Part[] | undefined): string =>
  (parts ?? [])
    .map((part) => (part.kind === 'text' ? part.text : part.kind === 'data' ? JSON.stringify(part.data) : ''))
    .join('')
