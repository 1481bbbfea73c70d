import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it, onTestFinished } from 'vitest'
import { platformBinding } from '../../runtime/src/bindings/_platform.ts'
import { v1Binding } from '../../runtime/src/bindings/_v1.ts'
import { v03Binding } from '../../runtime/src/bindings/_v03.ts'
import type { Binding } from '../../runtime/src/bindings/shared/_binding.ts'
import { ErrorCode } from '../../runtime/src/errors.ts'
import { agent } from './_agents.ts'
import {
  buildBody,
  DIALECTS,
  type Dialect,
  type FuzzBody,
  type FuzzTasks,
  METHODS,
  POLLUTION_MARKERS,
  STREAMING_METHODS,
} from './_fuzz-bodies.ts'
import { nodeServer, type Target } from './_transports.ts'

/**
 * The JSON-RPC endpoint against thousands of generated hostile bodies, in each dialect, over a real socket.
 * A failure names the seed, the dialect and the body's index: `A2A_FUZZ_SEED=<seed>` replays the run, and
 * `buildBody(seed, dialect, index, tasks)` rebuilds the one body.
 */

const SEED = Number(process.env.A2A_FUZZ_SEED ?? 0x5eed_a2a)
const BODIES_PER_DIALECT = 1_500
const CONCURRENCY = 4
/** Smaller than the default 1 MiB so huge strings reach the limit from both sides without megabytes per body. */
const MAX_BODY = 64 * 1024
/** A stream longer than this, or open longer than STREAM_TIMEOUT_MS, counts as a hang. */
const STREAM_LIMIT = 4 * 1024 * 1024
const STREAM_TIMEOUT_MS = 5_000
/**
 * A subscription to the waiting task stays open for its next turn, which no body starts: it is read up to its
 * first frame (the Task, a missed event, or a keep-alive, which come this often), then left.
 */
const SUBSCRIBING: ReadonlySet<string> = new Set(['tasks/resubscribe', 'SubscribeToTask'])
const HEARTBEAT_MS = 100

const BINDINGS: Record<Dialect, Binding> = { platform: platformBinding, 'a2a-0.3': v03Binding, 'a2a-1.0': v1Binding }
const KNOWN_CODES: ReadonlySet<number> = new Set(Object.values(ErrorCode))

/**
 * Asks for input when the text starts with "ask", otherwise answers at once. Cancel is allowed and push
 * notifications are declared, so a cancel or a webhook that got through would show.
 */
const fuzzAgent = agent(
  (ctx, task) => {
    if (ctx.text.startsWith('ask')) return task.inputRequired('Which colour?')
    task.artifact(`Answer: ${ctx.text.slice(0, 40)}`)
    task.complete()
  },
  { cancel: () => {}, card: { capabilities: { streaming: true, pushNotifications: true } } },
)

/** Webhooks may call only the test's receiver on 127.0.0.1; every other address is refused by the guard. */
const PUSH_OPTIONS = { allow: ['127.0.0.1'], allowHttp: true, retries: 0, timeoutMs: 2_000 }

/** Where valid webhooks deliver: answers 204 and counts. */
async function startReceiver(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  let received = 0
  const server: Server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      received++
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

// --- What the server should answer, from the envelope alone ---------------------------------------------

type JsonRpcId = string | number | null

type Expected =
  /** Refused before any method runs: exactly this status, code and id. */
  | { refused: true; status: number; code: number; id: JsonRpcId }
  /** Reaches a method: HTTP 200, the request's id, a result, an error or (streaming methods) a stream. */
  | { refused: false; id: JsonRpcId; method: string }

const V1_VERSION = /^1(\.0(\.\d+)?)?$/
const V03_VERSION = /^0\.3(\.\d+)?$/

const isJsonType = (type: string) => {
  const media = type.split(';', 1)[0]!.trim().toLowerCase()
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'))
}

/**
 * The envelope rules, in the order the server applies them: size (413), content type (415, JSON or none given;
 * -32005 in v1.0, else -32600, with the id when the body has one), UTF-8 JSON (-32700), request object (-32600,
 * echoing a usable id), A2A-Version (-32009), method (-32601). Written out here rather than imported, so the
 * test pins them.
 */
function expectedFor(body: FuzzBody): Expected {
  const headers = new Headers(body.headers)
  const type = headers.get('content-type')
  const typed = type !== null && isJsonType(type)
  const version = headers.get('a2a-version')?.trim()
  const bindingOf = (method: string) =>
    !version
      ? v1Binding.methods.has(method)
        ? v1Binding
        : platformBinding
      : V1_VERSION.test(version)
        ? v1Binding
        : V03_VERSION.test(version)
          ? v03Binding
          : undefined
  const untyped = (method: string, id: string | number | null): Expected => ({
    refused: true,
    status: 415,
    code: bindingOf(method) === v1Binding ? -32005 : -32600,
    id,
  })
  if (body.bytes.byteLength > MAX_BODY) return { refused: true, status: 413, code: -32600, id: null }
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder().decode(body.bytes))
  } catch {
    return typed ? { refused: true, status: 200, code: -32700, id: null } : untyped('', null)
  }
  const object = typeof value === 'object' && value !== null && !Array.isArray(value)
  const request = (object ? value : {}) as Record<string, unknown>
  const id =
    typeof request.id === 'string' || (typeof request.id === 'number' && Number.isFinite(request.id))
      ? request.id
      : null
  const method = typeof request.method === 'string' ? request.method : ''
  const binding = bindingOf(method)
  if (!typed) return untyped(method, id)
  if (!object) return { refused: true, status: 200, code: -32600, id: null }
  // No id, or a null one, is answered as a request with id null; any other id that is not a string or a finite number
  // is refused.
  const badId = id === null && request.id !== undefined && request.id !== null
  if (request.jsonrpc !== '2.0' || typeof request.method !== 'string' || request.method === '' || badId)
    return { refused: true, status: 200, code: -32600, id }
  if (!binding) return { refused: true, status: 200, code: ErrorCode.VersionNotSupported, id }
  if (!binding.methods.has(method)) return { refused: true, status: 200, code: -32601, id }
  return { refused: false, id, method }
}

// --- Sending and checking one body -----------------------------------------------------------------------

async function send(target: Target, body: FuzzBody): Promise<Response> {
  const init: RequestInit & { duplex?: 'half' } = { method: 'POST', headers: body.headers }
  if (body.chunks) {
    const chunks = [...body.chunks]
    init.body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks.shift()
        if (chunk) controller.enqueue(chunk)
        else controller.close()
      },
    })
    init.duplex = 'half'
  } else init.body = body.bytes
  return target.fetch(body.path, init)
}

/**
 * Reads a stream to its end, or until it passes STREAM_LIMIT or STREAM_TIMEOUT_MS (then cancels it); with
 * `firstFrame`, only until a whole frame has come (then leaves it, which counts as an end).
 */
async function readStream(response: Response, firstFrame = false): Promise<{ text: string; ended: boolean }> {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const deadline = Date.now() + STREAM_TIMEOUT_MS
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()))),
    )
    const read = await Promise.race([reader.read(), timeout])
    clearTimeout(timer)
    if (read === 'timeout' || text.length > STREAM_LIMIT) {
      await reader.cancel().catch(() => {})
      return { text, ended: false }
    }
    if (read.done) return { text, ended: true }
    text += decoder.decode(read.value, { stream: true })
    if (firstFrame && text.includes('\n\n')) {
      await reader.cancel().catch(() => {})
      return { text: text.slice(0, text.lastIndexOf('\n\n') + 2), ended: true }
    }
  }
}

const isObject = (value: unknown): value is Record<string, any> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** What is wrong with a JSON-RPC response object (an empty list when nothing is). */
function responseProblems(message: unknown, id: JsonRpcId): string[] {
  if (!isObject(message)) return ['not a JSON object']
  const problems: string[] = []
  const keys = Object.keys(message).sort().join(',')
  if (keys !== 'error,id,jsonrpc' && keys !== 'id,jsonrpc,result')
    problems.push(`keys ${keys}: want jsonrpc, id and exactly one of result and error`)
  if (message.jsonrpc !== '2.0') problems.push(`jsonrpc ${JSON.stringify(message.jsonrpc)}`)
  if (message.id !== id)
    problems.push(`id ${JSON.stringify(message.id)?.slice(0, 60)}, want ${JSON.stringify(id)?.slice(0, 60)}`)
  if ('error' in message) {
    const { error } = message
    if (!isObject(error)) problems.push('error is not an object')
    else {
      if (!Number.isInteger(error.code) || !KNOWN_CODES.has(error.code))
        problems.push(`error.code ${error.code} is not one of the runtime's codes`)
      // -32603 is for the unexpected: a bug, since nothing here makes the store or the agent fail.
      if (error.code === ErrorCode.Internal) problems.push(`-32603 ${error.message}`)
      if (typeof error.message !== 'string' || error.message === '')
        problems.push('error.message is not a non-empty string')
      const extra = Object.keys(error).filter((key) => !['code', 'message', 'data'].includes(key))
      if (extra.length) problems.push(`error has ${extra.join(', ')}`)
    }
  }
  return problems
}

/**
 * Every frame of an SSE body: `id:` lines, `data:` lines of JSON-RPC (responses to `id`, or platform notifications).
 */
function streamProblems(text: string, id: JsonRpcId): string[] {
  const problems: string[] = []
  for (const frame of text.split('\n\n').slice(0, -1)) {
    for (const line of frame.split('\n')) {
      if (/^id: \d+$/.test(line) || line.startsWith(':')) continue
      if (!line.startsWith('data: ')) {
        problems.push(`stream line ${JSON.stringify(line.slice(0, 80))}`)
        continue
      }
      let event: unknown
      try {
        event = JSON.parse(line.slice('data: '.length))
      } catch {
        problems.push(`stream data is not JSON: ${line.slice(0, 80)}`)
        continue
      }
      // The platform dialect streams notifications; the A2A dialects stream responses to the request.
      const notification =
        isObject(event) &&
        event.jsonrpc === '2.0' &&
        typeof event.method === 'string' &&
        isObject(event.params) &&
        !('id' in event)
      if (!notification) problems.push(...responseProblems(event, id).map((problem) => `stream event: ${problem}`))
    }
  }
  if (!text.endsWith('\n\n') && text !== '') problems.push('stream ends inside a frame')
  return problems
}

interface Verdict {
  /** For the tally: `200 result`, `200 -32602`, `413 -32600`, `200 stream`… */
  outcome: string
  /** The method whose handler the body reached, if it got past the envelope. */
  reached?: string
  problems: string[]
}

async function check(target: Target, body: FuzzBody): Promise<Verdict> {
  const expected = expectedFor(body)
  let response: Response
  try {
    response = await send(target, body)
  } catch (error) {
    return { outcome: 'no answer', problems: [`no answer: ${String((error as { cause?: unknown }).cause ?? error)}`] }
  }
  const problems: string[] = []
  if (response.status >= 500) problems.push(`HTTP ${response.status}`)
  const type = response.headers.get('content-type') ?? ''
  if (type.startsWith('text/event-stream')) {
    const { text, ended } = await readStream(response, !expected.refused && SUBSCRIBING.has(expected.method))
    if (!ended) problems.push(`the stream did not end within ${STREAM_TIMEOUT_MS} ms / ${STREAM_LIMIT} bytes`)
    if (expected.refused) problems.push(`a stream where ${expected.status} ${expected.code} was expected`)
    else if (!STREAMING_METHODS.has(expected.method)) problems.push(`${expected.method} answered with a stream`)
    if (response.status !== 200) problems.push(`a stream with HTTP ${response.status}`)
    if (body.mustRefuse) problems.push('accepted (a stream) though it must be refused')
    problems.push(...streamProblems(text, expected.refused ? null : expected.id))
    return { outcome: `${response.status} stream`, reached: expected.refused ? undefined : expected.method, problems }
  }
  const text = await response.text()
  if (!/^application\/json\b/.test(type)) problems.push(`Content-Type ${JSON.stringify(type)}`)
  let message: any
  try {
    message = JSON.parse(text)
  } catch {
    return { outcome: `${response.status} not JSON`, problems: [...problems, `not JSON: ${text.slice(0, 200)}`] }
  }
  problems.push(...responseProblems(message, expected.id))
  const code: number | undefined = isObject(message) && isObject(message.error) ? message.error.code : undefined
  if (expected.refused) {
    if (response.status !== expected.status || code !== expected.code)
      problems.push(`HTTP ${response.status} ${code ?? 'result'}, want HTTP ${expected.status} ${expected.code}`)
  } else if (response.status !== 200) problems.push(`HTTP ${response.status} from ${expected.method}`)
  if (body.mustRefuse && code === undefined) problems.push('accepted (a result) though it must be refused')
  return {
    outcome: `${response.status} ${code ?? 'result'}`,
    reached: expected.refused ? undefined : expected.method,
    problems,
  }
}

/** Runs `work` for 0…count-1, `concurrency` at a time. */
async function pool(count: number, concurrency: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < count) await work(next++)
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}

/** A readable prefix of a body for failure messages. */
const preview = (body: FuzzBody) => JSON.stringify(new TextDecoder().decode(body.bytes.slice(0, 300)))

// --- What must not change ----------------------------------------------------------------------------------

/** Records uncaught exceptions and unhandled rejections while the fuzz runs (the server runs in this process). */
function watchProcess() {
  const seen: string[] = []
  const record = (error: unknown) => seen.push(error instanceof Error ? (error.stack ?? error.message) : String(error))
  process.on('uncaughtException', record)
  process.on('unhandledRejection', record)
  return {
    seen,
    stop() {
      process.off('uncaughtException', record)
      process.off('unhandledRejection', record)
    },
  }
}

const PROTOTYPES: Record<string, object> = {
  Object: Object.prototype,
  Array: Array.prototype,
  Function: Function.prototype,
  String: String.prototype,
  Number: Number.prototype,
  Boolean: Boolean.prototype,
}

/** Every own property of the built-in prototypes, by identity. */
function prototypeState(): Map<string, PropertyDescriptor> {
  const state = new Map<string, PropertyDescriptor>()
  for (const [name, prototype] of Object.entries(PROTOTYPES)) {
    for (const key of Reflect.ownKeys(prototype))
      state.set(`${name}.prototype.${String(key)}`, Object.getOwnPropertyDescriptor(prototype, key)!)
  }
  return state
}

function prototypeChanges(before: Map<string, PropertyDescriptor>): string[] {
  const after = prototypeState()
  const changes = [...after.keys()].filter((key) => !before.has(key)).map((key) => `added ${key}`)
  for (const [key, descriptor] of before) {
    const now = after.get(key)
    if (!now) changes.push(`removed ${key}`)
    else if (now.value !== descriptor.value || now.get !== descriptor.get || now.set !== descriptor.set)
      changes.push(`changed ${key}`)
  }
  return changes
}

const rpcText = async (target: Target, method: string, params: unknown, headers: Record<string, string> = {}) => {
  const response = await target.fetch('/', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'snapshot', method, params }),
  })
  return response.text()
}

/**
 * A task as each dialect shows it, as raw response text, compared byte for byte after the fuzz; with its
 * webhooks unless `webhooks` is false (the scratch task's may change).
 */
async function snapshot(target: Target, id: string, webhooks = true): Promise<string[]> {
  return [
    await rpcText(target, 'tasks/get', { id }),
    await rpcText(target, 'tasks/get', { id }, { 'a2a-version': '0.3' }),
    await rpcText(target, 'GetTask', { id }, { 'a2a-version': '1.0' }),
    ...(webhooks
      ? [
          await rpcText(target, 'tasks/pushNotificationConfig/list', { id }, { 'a2a-version': '0.3' }),
          await rpcText(target, 'ListTaskPushNotificationConfigs', { taskId: id }, { 'a2a-version': '1.0' }),
        ]
      : []),
  ]
}

async function fuzzTasks(target: Target, webhook: string): Promise<FuzzTasks> {
  const send = async (text: string) =>
    (
      await target.rpc('message/send', {
        message: { kind: 'message', role: 'user', messageId: `setup-${text}`, parts: [{ kind: 'text', text }] },
      })
    ).body.result
  const done = await send('hello')
  const waiting = await send('ask me')
  const scratch = await send('scratch')
  expect(done.status.state).toBe('completed')
  expect(waiting.status.state).toBe('input-required')
  // Webhooks only the fuzz could change: it must not.
  const set = await target.rpc(
    'CreateTaskPushNotificationConfig',
    { taskId: waiting.id, id: 'kept', url: webhook, token: 'kept-token' },
    { headers: { 'a2a-version': '1.0' } },
  )
  expect(set.body.result).toMatchObject({ id: 'kept', taskId: waiting.id })
  return { done: done.id, waiting: waiting.id, waitingContext: waiting.contextId, scratch: scratch.id, webhook }
}

async function snapshots(target: Target, tasks: FuzzTasks) {
  return {
    done: await snapshot(target, tasks.done),
    waiting: await snapshot(target, tasks.waiting),
    scratch: await snapshot(target, tasks.scratch, false),
  }
}

/** The server answers ordinary requests in all three dialects, and the waiting task takes its follow-up. */
async function expectNormalService(target: Target, tasks: FuzzTasks): Promise<void> {
  const platform = await target.rpc(
    'message/send',
    { message: { kind: 'message', role: 'user', messageId: 'after-1', parts: [{ kind: 'text', text: 'after' }] } },
    { id: 'after-1' },
  )
  expect(platform.status).toBe(200)
  expect(platform.body).toMatchObject({
    id: 'after-1',
    result: { status: { state: 'completed' }, artifacts: [{ parts: [{ kind: 'text', text: 'Answer: after' }] }] },
  })
  const got = await target.rpc('tasks/get', { id: platform.body.result.id }, { id: 'after-2' })
  expect(got.body).toEqual({ jsonrpc: '2.0', id: 'after-2', result: platform.body.result })

  const v03 = await target.rpc(
    'message/send',
    { message: { kind: 'message', role: 'user', messageId: 'after-3', parts: [{ kind: 'text', text: 'after' }] } },
    { id: 3, headers: { 'a2a-version': '0.3' } },
  )
  expect(v03.body).toMatchObject({ id: 3, result: { kind: 'task', status: { state: 'completed' } } })

  const v1 = await target.rpc(
    'SendMessage',
    { message: { messageId: 'after-4', role: 'ROLE_USER', parts: [{ text: 'after' }] } },
    { id: 'after-4', headers: { 'a2a-version': '1.0' } },
  )
  expect(v1.body).toMatchObject({ id: 'after-4', result: { task: { status: { state: 'TASK_STATE_COMPLETED' } } } })
  const v1Got = await target.rpc(
    'GetTask',
    { id: v1.body.result.task.id },
    { id: 'after-5', headers: { 'a2a-version': '1.0' } },
  )
  expect(v1Got.body.result).toEqual(v1.body.result.task)

  const followUp = await target.rpc('message/send', {
    message: {
      kind: 'message',
      role: 'user',
      messageId: 'after-6',
      taskId: tasks.waiting,
      parts: [{ kind: 'text', text: 'blue' }],
    },
  })
  expect(followUp.body.result).toMatchObject({ id: tasks.waiting, status: { state: 'completed' } })
}

// --- The tests ---------------------------------------------------------------------------------------------

describe(`fuzzed JSON-RPC bodies (seed ${SEED}; replay with A2A_FUZZ_SEED=${SEED})`, () => {
  it('covers every method each dialect serves, streaming and push-notification-config ones included', () => {
    for (const dialect of DIALECTS)
      expect([...METHODS[dialect]].sort(), dialect).toEqual([...BINDINGS[dialect].methods.keys()].sort())
  })

  it('rebuilds the same body from the same seed, dialect and index, so a failure can be replayed', () => {
    const tasks: FuzzTasks = {
      waiting: 'w',
      waitingContext: 'c',
      done: 'd',
      scratch: 's',
      webhook: 'http://127.0.0.1:1/hook',
    }
    for (const index of [0, 1, 17, 999]) {
      const first = buildBody(SEED, 'a2a-1.0', index, tasks)
      const again = buildBody(SEED, 'a2a-1.0', index, tasks)
      expect(again).toEqual(first)
    }
    const other = buildBody(SEED + 1, 'a2a-1.0', 17, tasks)
    expect(other.bytes).not.toEqual(buildBody(SEED, 'a2a-1.0', 17, tasks).bytes)
  })

  describe.each(DIALECTS)('%s dialect', (dialect) => {
    it(`answers ${BODIES_PER_DIALECT} hostile bodies for every method with a JSON-RPC error or a valid answer: no 5xx, crash, hang, change to another task or polluted prototype, and serves normally afterwards`, async () => {
      const receiver = await startReceiver()
      // The slash-named methods speak the platform dialect whatever A2A_DIALECT says: expectedFor assumes it.
      const target = await nodeServer.start(fuzzAgent, {
        maxBodySize: MAX_BODY,
        push: PUSH_OPTIONS,
        dialect: 'platform',
        sseHeartbeatMs: HEARTBEAT_MS,
      })
      const tasks = await fuzzTasks(target, receiver.url)
      const before = await snapshots(target, tasks)
      const prototypes = prototypeState()
      const faults = watchProcess()
      const failures: string[] = []
      const outcomes = new Map<string, number>()
      const reached = new Map<string, number>()
      let mustRefuse = 0
      try {
        await pool(BODIES_PER_DIALECT, CONCURRENCY, async (index) => {
          const body = buildBody(SEED, dialect, index, tasks)
          if (body.mustRefuse) mustRefuse++
          const verdict = await check(target, body)
          const { outcome, problems } = verdict
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
          if (verdict.reached) reached.set(verdict.reached, (reached.get(verdict.reached) ?? 0) + 1)
          if (problems.length) {
            failures.push(
              `seed ${SEED} ${dialect} #${index} [${body.label}] ${body.path} ${JSON.stringify(body.headers)} ${preview(body)}\n    → ${problems.join('\n    → ')}`,
            )
          }
        })
      } finally {
        faults.stop()
        // After the app (closed after the test) has had its deliveries: closing sooner would fail them.
        onTestFinished(() => receiver.close())
      }
      expect(failures.slice(0, 15).join('\n'), `${failures.length} of ${BODIES_PER_DIALECT} bodies failed`).toBe('')
      expect(faults.seen, 'uncaught exceptions or unhandled rejections').toEqual([])
      expect(target.logger.text('error'), 'unexpected errors in the log').toBe('')
      expect(prototypeChanges(prototypes)).toEqual([])
      for (const marker of POLLUTION_MARKERS) expect(({} as Record<string, unknown>)[marker], marker).toBeUndefined()

      // No task changed, byte for byte, in any dialect's view; nor did the webhooks of the protected ones.
      expect(await snapshots(target, tasks)).toEqual(before)

      // Past the envelope, the bodies reached every method's own validation; and every layer answered some.
      for (const method of METHODS[dialect])
        expect(reached.get(method) ?? 0, `bodies that reached ${method}`).toBeGreaterThanOrEqual(20)
      expect(mustRefuse).toBeGreaterThan(50)
      const seen = [...outcomes.keys()]
      for (const outcome of [
        '415 -32600',
        '413 -32600',
        '200 -32700',
        '200 -32600',
        '200 -32601',
        '200 -32602',
        '200 -32009',
        '200 result',
      ])
        expect(seen, outcome).toContain(outcome)
      // A v1.0 body without a JSON type gets v1.0's own code.
      if (dialect === 'a2a-1.0') expect(seen).toContain('415 -32005')
      expect(seen).toContain('200 stream')

      await expectNormalService(target, tasks)
      // Webhooks still deliver: one given with a new message is called (after the answer, so polled).
      const delivered = receiver.received()
      const withWebhook = await target.rpc(
        'SendMessage',
        {
          message: { messageId: 'after-7', role: 'ROLE_USER', parts: [{ text: 'hook' }] },
          configuration: { taskPushNotificationConfig: { url: receiver.url } },
        },
        { headers: { 'a2a-version': '1.0' } },
      )
      expect(withWebhook.body.result.task.status.state).toBe('TASK_STATE_COMPLETED')
      await expect.poll(() => receiver.received(), { timeout: 5_000 }).toBeGreaterThan(delivered)
    }, 30_000)
  })
})
