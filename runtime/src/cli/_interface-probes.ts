import { randomUUID } from 'node:crypto'
import { connect } from 'node:net'
import { isObject } from '../_is-object.js'
import type { GrpcProbeClient, ProbeOutcome } from '../grpc/_probe-client.js'
import type { Finding } from './_card-check.js'
import { isLoopbackHost } from './_loopback.js'

/**
 * `a2a card validate --live`, past the platform's endpoint: every interface the A2A v1.0 card declares in
 * `supportedInterfaces` is asked the same things in its own binding — is a declared scheme enforced, is an unknown
 * task answered as TaskNotFound in that binding's shape, does a message settle, and (when the card streams) does a
 * stream arrive framed as that binding frames it and end. An agent whose bindings disagree (A2A v1.0 §5.1) shows
 * which one.
 */

export interface InterfaceProbeOptions {
  /** Sent with the probes when the card declares authentication, to interfaces on the agent's own host only. */
  headers: Record<string, string>
  timeoutMs: number
}

/**
 * Whether an interface is on the host of the agent asked for: the credentials given (or the project's own, for an
 * agent on this machine) go only there, never to another host a card names.
 */
function onAgentHost(entry: Json, base: URL): boolean {
  const binding = String(entry.protocolBinding).toUpperCase()
  let hostname: string
  if (binding === 'GRPC') {
    const host = /^(?:grpcs?:\/\/)?(\[[^\]]+\]|[^:/]+):\d+\/?$/.exec(entry.url)?.[1]
    if (!host) return false
    hostname = host.toLowerCase()
  } else {
    if (!URL.canParse(entry.url)) return false
    const url = new URL(entry.url)
    if (url.origin !== base.origin) return false
    hostname = url.hostname
  }
  return hostname === base.hostname || (isLoopbackHost(hostname) && isLoopbackHost(base.hostname))
}

/** What one probe of an interface found: nothing, or why it is wrong. */
type Check = string | undefined

interface Answer {
  status: number
  body: unknown
}

/** One binding's way of asking: its requests and how it frames answers. */
interface Caller {
  /** A task the agent cannot have, asked without credentials when `anonymous`. */
  unknownTask(anonymous: boolean): Promise<Answer>
  /** Why the answer to `unknownTask` is not TaskNotFound in this binding's shape. */
  notFoundProblem(answer: Answer): Check
  /** The state a sent message ended in (a Message reply counts as ended), or why there is none. */
  send(text: string): Promise<{ state: string } | { problem: string }>
  /** A streaming send's events, or why there is no stream; each event is checked by `frameProblem`. */
  stream(text: string): Promise<{ frames: unknown[] } | { problem: string }>
  frameProblem(frame: unknown): Check
  close?(): void
}

const ENDED_OR_WAITING = new Set([
  'completed',
  'failed',
  'canceled',
  'rejected',
  'input-required',
  'auth-required',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
])
const V1_RESULTS = ['task', 'message', 'statusUpdate', 'artifactUpdate']

// biome-ignore lint/suspicious/noExplicitAny: answers as the agent sent them, each field checked where it is read
type Json = Record<string, any>

function jsonRpc(url: string, version: '1.0' | '0.3', options: InterfaceProbeOptions): Caller {
  const v1 = version === '1.0'
  const post = async (method: string, params: unknown, headers = options.headers): Promise<Response> =>
    fetch(url, {
      method: 'POST',
      // A v0.3 client says nothing of its version (the 0.3 SDKs never do): the address must speak v0.3 by itself.
      headers: { 'content-type': 'application/json', ...(v1 && { 'a2a-version': '1.0' }), ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
    })
  const message = (text: string) =>
    v1
      ? { message: { role: 'ROLE_USER', messageId: randomUUID(), parts: [{ text }] } }
      : { message: { kind: 'message', role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text }] } }
  return {
    async unknownTask(anonymous) {
      const response = await post(
        v1 ? 'GetTask' : 'tasks/get',
        { id: 'probe-unknown-task' },
        anonymous ? {} : undefined,
      )
      return { status: response.status, body: await response.json().catch(() => undefined) }
    },
    notFoundProblem: ({ body }) => {
      const code = isObject(body) && isObject(body.error) ? body.error.code : undefined
      return code === -32001 ? undefined : `an unknown task answered ${describe(body)}, not error -32001 (TaskNotFound)`
    },
    async send(text) {
      const response = await post(v1 ? 'SendMessage' : 'message/send', message(text))
      const body = (await response.json().catch(() => undefined)) as Json | undefined
      if (body?.error) return { problem: `answered error ${body.error.code}: ${body.error.message}` }
      const result = body?.result
      if (v1 ? result?.message : result?.kind === 'message') return { state: 'completed' }
      const state = (v1 ? result?.task : result)?.status?.state
      return typeof state === 'string' ? { state } : { problem: `answered ${describe(body)}, not a task or message` }
    },
    stream: async (text) => sseFrames(await post(v1 ? 'SendStreamingMessage' : 'message/stream', message(text))),
    frameProblem: (frame) => {
      const result = isObject(frame) ? frame.result : undefined
      if (!isObject(frame) || frame.jsonrpc !== '2.0' || !isObject(result))
        return `a stream event is not a JSON-RPC response carrying a result: ${describe(frame)}`
      if (v1 ? !V1_RESULTS.some((field) => field in result) : typeof result.kind !== 'string')
        return `a stream event's result is not ${v1 ? 'a v1.0 StreamResponse' : 'a v0.3 event with a kind'}: ${describe(result)}`
      return undefined
    },
  }
}

function httpJson(url: string, options: InterfaceProbeOptions): Caller {
  const base = url.replace(/\/+$/, '')
  const call = (path: string, init: RequestInit & { anonymous?: boolean } = {}): Promise<Response> =>
    fetch(`${base}${path}`, {
      ...init,
      headers: {
        'content-type': 'application/a2a+json',
        'a2a-version': '1.0',
        ...(init.anonymous ? {} : options.headers),
      },
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
    })
  const message = (text: string) =>
    JSON.stringify({ message: { role: 'ROLE_USER', messageId: randomUUID(), parts: [{ text }] } })
  return {
    async unknownTask(anonymous) {
      const response = await call('/tasks/probe-unknown-task', { anonymous })
      return { status: response.status, body: await response.json().catch(() => undefined) }
    },
    notFoundProblem: ({ status, body }) => {
      const error = isObject(body) && isObject(body.error) ? body.error : undefined
      const reasons = Array.isArray(error?.details) ? error.details.map((detail) => detail?.reason) : []
      return status === 404 && reasons.includes('TASK_NOT_FOUND')
        ? undefined
        : `an unknown task answered HTTP ${status} ${describe(body)}, not 404 with a google.rpc.Status whose ErrorInfo reason is TASK_NOT_FOUND`
    },
    async send(text) {
      const response = await call('/message:send', { method: 'POST', body: message(text) })
      const body = (await response.json().catch(() => undefined)) as Json | undefined
      if (!response.ok) return { problem: `answered HTTP ${response.status} ${describe(body)}` }
      if (body?.message) return { state: 'completed' }
      const state = body?.task?.status?.state
      return typeof state === 'string' ? { state } : { problem: `answered ${describe(body)}, not a task or message` }
    },
    stream: async (text) => sseFrames(await call('/message:stream', { method: 'POST', body: message(text) })),
    frameProblem: (frame) =>
      isObject(frame) && V1_RESULTS.some((field) => field in frame)
        ? undefined
        : `a stream event is not a StreamResponse (task, message, statusUpdate or artifactUpdate): ${describe(frame)}`,
  }
}

const GRPC_NOT_FOUND = 5
const GRPC_UNAUTHENTICATED = 16
const GRPC_PERMISSION_DENIED = 7

/** A gRPC client of the interface, where the optional packages it needs are installed (else a connection check). */
async function grpcProbeClient(address: string, timeoutMs: number): Promise<GrpcProbeClient | undefined> {
  try {
    const { grpcProbeClient } = await import('../grpc/_probe-client.js')
    return grpcProbeClient(address, timeoutMs)
  } catch {
    return undefined
  }
}

function grpc(client: GrpcProbeClient, options: InterfaceProbeOptions): Caller {
  const message = (text: string) => ({ message: { role: 'ROLE_USER', messageId: randomUUID(), parts: [{ text }] } })
  // A refusal of the credentials reads as the HTTP bindings' 401 / 403, so one rule judges every interface.
  const answerOf = (outcome: ProbeOutcome): Answer =>
    'answers' in outcome
      ? { status: 200, body: outcome.answers[0] }
      : {
          status: outcome.code === GRPC_UNAUTHENTICATED ? 401 : outcome.code === GRPC_PERMISSION_DENIED ? 403 : 200,
          body: outcome,
        }
  return {
    unknownTask: async (anonymous) =>
      answerOf(await client.call('GetTask', { id: 'probe-unknown-task' }, anonymous ? {} : options.headers)),
    notFoundProblem: ({ body }) =>
      isObject(body) && body.code === GRPC_NOT_FOUND && body.reason === 'TASK_NOT_FOUND'
        ? undefined
        : `an unknown task answered ${describe(body)}, not NOT_FOUND with the ErrorInfo reason TASK_NOT_FOUND`,
    async send(text) {
      const outcome = await client.call('SendMessage', message(text), options.headers)
      if (!('answers' in outcome)) return { problem: `ended with status ${outcome.code}: ${outcome.message}` }
      const body = outcome.answers[0] as Json | undefined
      if (body?.message) return { state: 'completed' }
      const state = body?.task?.status?.state
      return typeof state === 'string' ? { state } : { problem: `answered ${describe(body)}, not a task or message` }
    },
    async stream(text) {
      const outcome = await client.call('SendStreamingMessage', message(text), options.headers)
      return 'answers' in outcome
        ? { frames: outcome.answers }
        : { problem: `ended with status ${outcome.code}: ${outcome.message}` }
    },
    frameProblem: (frame) =>
      isObject(frame) && V1_RESULTS.some((field) => field in frame)
        ? undefined
        : `a stream event is not a StreamResponse (task, message, statusUpdate or artifactUpdate): ${describe(frame)}`,
    close: () => client.close(),
  }
}

/** A short view of a JSON answer for a finding. */
function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 160 ? `${text.slice(0, 160)}…` : text
}

/** Each interface of the A2A v1.0 card, probed in its binding. */
export async function probeInterfaces(card: Json, base: URL, options: InterfaceProbeOptions): Promise<Finding[]> {
  const interfaces: unknown[] = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : []
  const declared = Array.isArray(card.securityRequirements) && card.securityRequirements.length > 0
  const streaming = card.capabilities?.streaming === true
  const findings: Finding[] = []
  for (const [index, entry] of interfaces.entries()) {
    if (!isObject(entry) || typeof entry.url !== 'string') continue
    const path = `supportedInterfaces[${index}]`
    const name = `${entry.protocolBinding} ${entry.protocolVersion ?? ''} at ${entry.url}`.replace('  ', ' ')
    const credentialed = onAgentHost(entry, base) || Object.keys(options.headers).length === 0
    const problems = credentialed
      ? await probeInterface(entry as Json, { declared, streaming }, options)
      : await probeElsewhere(entry as Json, { declared, streaming }, options, base)
    for (const problem of problems)
      findings.push({
        level: problem.level ?? 'error',
        path,
        message: `${name}: ${problem.message}`,
        hint: problem.hint,
      })
  }
  return findings
}

interface Problem {
  level?: 'error' | 'warning'
  message: string
  hint: string
}

/**
 * An interface on another host than the agent asked for: probed without credentials. Where the card requires them,
 * only its refusal of an anonymous request is checked, and the finding says why no more.
 */
async function probeElsewhere(
  entry: Json,
  card: { declared: boolean; streaming: boolean },
  options: InterfaceProbeOptions,
  base: URL,
): Promise<Problem[]> {
  const anonymous = { ...options, headers: {} }
  if (!card.declared) return probeInterface(entry, card, anonymous)
  const problems = await probeInterface(entry, { ...card, anonymousOnly: true }, anonymous)
  problems.push({
    level: 'warning',
    message: `on another host than ${base.origin}: the credentials given go only there, so only its refusal of a request without them was checked`,
    hint: "validate that host's agent by its own URL, with its credentials",
  })
  return problems
}

const SAME_EVERYWHERE = 'every interface serves the same operations the same way (A2A v1.0 §5.1)'

async function probeInterface(
  entry: Json,
  card: { declared: boolean; streaming: boolean; anonymousOnly?: boolean },
  options: InterfaceProbeOptions,
): Promise<Problem[]> {
  const binding = String(entry.protocolBinding).toUpperCase()
  let caller: Caller | undefined
  if (binding === 'GRPC') {
    const client = await grpcProbeClient(entry.url, options.timeoutMs)
    if (!client) return probeReachable(entry.url, options.timeoutMs)
    caller = grpc(client, options)
  } else
    caller =
      binding === 'JSONRPC'
        ? jsonRpc(entry.url, entry.protocolVersion === '0.3' ? '0.3' : '1.0', options)
        : binding === 'HTTP+JSON'
          ? httpJson(entry.url, options)
          : undefined
  if (!caller)
    return [
      {
        level: 'warning',
        message: 'not probed: a binding this check does not know',
        hint: 'JSONRPC, HTTP+JSON and GRPC are the standard bindings (A2A v1.0 §5)',
      },
    ]
  const problems: Problem[] = []
  try {
    const anonymous = await caller.unknownTask(true)
    if (card.declared && anonymous.status !== 401)
      problems.push({
        message: `the card requires credentials but a request without them got HTTP ${anonymous.status}`,
        hint: `enforce the declared schemes on ${SAME_EVERYWHERE.replace('the same operations the same way', 'them')}`,
      })
    if (!card.declared && anonymous.status === 401)
      problems.push({ message: 'HTTP 401 though the card declares no security', hint: 'declare the schemes it checks' })
    if (card.anonymousOnly) return problems
    const unknown = card.declared ? await caller.unknownTask(false) : anonymous
    if (unknown.status === 401 || unknown.status === 403) {
      problems.push({
        message: `HTTP ${unknown.status} with the credentials given, so nothing else was probed`,
        hint: 'pass --token <token> or --api-key <key>',
      })
      return problems
    }
    const notFound = caller.notFoundProblem(unknown)
    if (notFound) problems.push({ message: notFound, hint: SAME_EVERYWHERE })
    const sent = await caller.send('hello')
    if ('problem' in sent) problems.push({ message: `a message ${sent.problem}`, hint: SAME_EVERYWHERE })
    else if (!ENDED_OR_WAITING.has(sent.state))
      problems.push({
        message: `a message came back ${sent.state}, not ended`,
        hint: 'end every path of the agent with complete, fail or cancel',
      })
    if (card.streaming) problems.push(...(await streamProblems(caller)))
  } catch (error) {
    problems.push({
      message: `no answer within ${options.timeoutMs} ms or no connection (${(error as Error).name}: ${(error as Error).message})`,
      hint: 'serve every interface the card declares, at its url',
    })
  } finally {
    caller.close?.()
  }
  return problems
}

/** The events of an SSE answer, or why it is not one. */
async function sseFrames(response: Response): Promise<{ frames: unknown[] } | { problem: string }> {
  const type = response.headers.get('content-type') ?? ''
  if (!type.startsWith('text/event-stream')) {
    await response.body?.cancel()
    return { problem: `answered HTTP ${response.status} ${type || 'without a content type'}, not text/event-stream` }
  }
  const frames: unknown[] = []
  for (const block of (await response.text()).split('\n\n')) {
    const data = block
      .split('\n')
      .find((line) => line.startsWith('data: '))
      ?.slice(6)
    if (data === undefined) continue
    try {
      frames.push(JSON.parse(data))
    } catch {
      return { problem: `sent an event that is not JSON: ${describe(data)}` }
    }
  }
  return { frames }
}

async function streamProblems(caller: Caller): Promise<Problem[]> {
  const streamed = await caller.stream('hello')
  if ('problem' in streamed)
    return [
      {
        message: `a streaming send ${streamed.problem}`,
        hint: 'serve streams as the binding says, or set capabilities.streaming to false',
      },
    ]
  if (streamed.frames.length === 0)
    return [{ message: 'the stream closed without an event', hint: 'send the task first, then its events' }]
  for (const frame of streamed.frames) {
    const problem = caller.frameProblem(frame)
    if (problem) return [{ message: problem, hint: SAME_EVERYWHERE }]
  }
  return []
}

/** Without a gRPC client the check stops at the connection, and says so. */
function probeReachable(address: string, timeoutMs: number): Promise<Problem[]> {
  const match = /^(?:grpcs?:\/\/)?\[?([^\]]+?)\]?:(\d+)\/?$/.exec(address)
  if (!match)
    return Promise.resolve([
      { message: 'not a host:port address', hint: 'a gRPC interface is declared as host:port (A2A v1.0 §10)' },
    ])
  const [, host, port] = match
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(port), timeout: timeoutMs })
    const done = (problems: Problem[]) => {
      socket.destroy()
      resolve(problems)
    }
    socket.once('connect', () =>
      done([
        {
          level: 'warning',
          message: 'reachable; its calls were not probed: that needs the packages @grpc/grpc-js and @bufbuild/protobuf',
          hint: 'install them beside a2a-runtime (npm install @grpc/grpc-js @bufbuild/protobuf) to probe gRPC too',
        },
      ]),
    )
    const refused = (why: string) =>
      done([{ message: `cannot connect (${why})`, hint: 'serve every interface the card declares, at its url' }])
    socket.once('timeout', () => refused(`no connection within ${timeoutMs} ms`))
    socket.once('error', (error: NodeJS.ErrnoException) => refused(error.code ?? error.message))
  })
}
