import { type Agent, get as httpGet } from 'node:http'
import { connect } from 'node:net'
import { performance } from 'node:perf_hooks'
import { expect } from 'vitest'
import {
  httpAgent,
  jsonRpc,
  type OpenStream,
  openStream,
  post,
  type RpcReply,
  rpc,
  type SseFrame,
  type StreamResult,
  summarize,
  taskIdOf,
  v1State,
} from '../runtime/_load-client.ts'
import { type AgentProcess, fdsOf, type Probe, pollUntil, rssOf, startAgentProcess } from '../runtime/_load-process.ts'
import { userMessage, userMessageV1 } from '../runtime/_messages.ts'

/**
 * The mixed soak: for `seconds`, `concurrency` workers each run one operation after another against an agent
 * process with small retention: blocking sends (both dialects), streams, multi-turn conversations, cancels
 * mid-run, failing tasks, gets, lists, resubscriptions (also resuming a broken stream with Last-Event-ID),
 * client disconnects mid-stream and mid-request, and bad requests. It tracks every task it started and checks
 * each one as soon as it has finished. It collects problems rather than throwing, so the report prints either
 * way; the caller asserts `problems` is empty and the memory and fd figures.
 *
 * Lost: a task the server acknowledged that it cannot show in the state it ended in, although retention
 * cannot have dropped it yet. The memory store drops settled tasks only past `ttlMs`, or past `maxTasks`
 * oldest-settled first: a task can only be evicted for the count once at least maxTasks - maxTasks/64 tasks
 * sit behind it or run in front of it, i.e. after that many tasks were created or resumed since it last
 * started, less the running ones (at most one per worker). The soak counts every request that may create or
 * resume a task, so it knows when an eviction was possible: a missing task is "evicted" only then, else lost.
 * Stuck: a task still working/submitted after the drain, or one a client waits for that never ends.
 */

export interface SoakOptions {
  seconds: number
  concurrency: number
  /** Memory store retention of the agent process. */
  maxTasks: number
  ttlMs: number
  /**
   * Caps set low on purpose (a few times `concurrency`): a stream or a running task that is never
   * un-counted (a disconnect that leaks) soon shows as 503/429 answers.
   */
  maxRunning: number
  maxStreams: number
  /** How long the warm-up mix runs before the baseline is read. Default 1,500 ms. */
  warmupMs?: number
  /**
   * How long to wait for what should come at once (a drain, connections closing, fds coming back), in ms;
   * requests time out after twice that. Bounds a failing run so that it still reports. Default 10,000.
   */
  patienceMs?: number
  /** Where the report goes as well as into the result. */
  print?: (line: string) => void
}

export interface SoakResult {
  problems: string[]
  report: string
  tasks: {
    started: number
    verified: number
    evicted: number
    lost: number
    stuck: number
    evictedOnLaterGet: number
    states: Record<string, number>
  }
  requests: number
  fiveHundreds: number
  memory: {
    baselineHeap: number
    baselineRss: number
    peakRss: number
    afterHeap: number
    afterRss: number
    storeAfter: number
  }
  fds: { baseline: number; peak: number; after: number } | undefined
  peakActive: number
}

type Expected = 'completed' | 'canceled' | 'failed' | 'input-required'
const TERMINAL = new Set(['completed', 'canceled', 'failed', 'rejected'])
const NOT_FOUND = 'Task not found'

interface Tracked {
  id: string
  kind: string
  /** When, and after how many task-starting requests, the task last started a turn (for eviction accounting). */
  startedAt: number
  opsAtStart: number
}

/** Latencies of one kind of request. */
class Kind {
  readonly ms: number[] = []
  readonly statuses = new Map<number | string, number>()
  add(ms: number, status: number | string) {
    this.ms.push(ms)
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1)
  }
  quantile(q: number): number {
    if (this.ms.length === 0) return Number.NaN
    const sorted = [...this.ms].sort((a, b) => a - b)
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
  }
}

/** Weighted operations of the mix (the weights are shares, not percentages). */
const MIX: Array<[string, number]> = [
  ['send', 12],
  ['send-v1', 6],
  ['fail', 2],
  ['stream', 10],
  ['stream-v1', 6],
  ['multi-turn', 7],
  ['abandon', 1],
  ['cancel', 6],
  ['get', 7],
  ['list', 4],
  ['resubscribe', 5],
  ['resume', 4],
  ['disconnect', 5],
  ['disconnect-send', 2],
  ['card', 2],
  ['bad', 9],
]
const MIX_TOTAL = MIX.reduce((sum, [, weight]) => sum + weight, 0)
const pick = (): string => {
  let r = Math.random() * MIX_TOTAL
  for (const [kind, weight] of MIX) {
    r -= weight
    if (r < 0) return kind
  }
  return MIX[0]![0]
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const mb = (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : 'n/a')
const streamText = (events: number, gap: number) => `stream:${events}:${gap}`
const expectedStream = (events: number, v1: boolean) => [
  ...(v1 ? ['task:working'] : []),
  'status:working',
  'status:working:streaming',
  ...Array.from({ length: events }, (_, i) => `artifact:part ${i + 1}`),
  'status:completed:final',
]
const summaries = (frames: SseFrame[]) => frames.map((frame) => summarize(frame.data))

export async function runMixedSoak(options: SoakOptions): Promise<SoakResult> {
  const print = options.print ?? (() => {})
  const patience = options.patienceMs ?? 10_000
  const requestTimeout = 2 * patience
  // Settled tasks are gone after ttlMs; the sweeper runs every ttlMs.
  const retentionWait = 2 * options.ttlMs + patience / 2
  const problems: string[] = []
  const problem = (text: string) => {
    if (problems.length < 200) problems.push(text)
  }
  const kinds = new Map<string, Kind>()
  const kind = (name: string) => {
    let k = kinds.get(name)
    if (!k) {
      k = new Kind()
      kinds.set(name, k)
    }
    return k
  }
  let fiveHundreds = 0
  let requests = 0
  // Requests that may create or resume a task, so far.
  let taskOps = 0
  const counts = { started: 0, verified: 0, evicted: 0, lost: 0, stuck: 0, evictedOnLaterGet: 0, lateResubscribes: 0 }
  const opCounts = new Map<string, number>()
  const states: Record<string, number> = {}
  // Tasks known to have ended (bounded), with the state they ended in and when the client learnt it: a get
  // or a list sent after that must agree.
  const ended = new Map<string, { state: string; at: number }>()
  const recent: Array<{ task: Tracked; state: string }> = []

  const agents: Agent[] = []
  const open = new Set<OpenStream>()
  let server: AgentProcess | undefined
  let sampler: ReturnType<typeof setInterval> | undefined
  try {
    server = await startAgentProcess({
      MAX_TASKS: String(options.maxTasks),
      TTL_MS: String(options.ttlMs),
      MAX_RUNNING: String(options.maxRunning),
      MAX_STREAMS: String(options.maxStreams),
    })
    const { url, pid } = server
    // Keep-alive connections, as a client would; the warm-up's agent is destroyed before the baseline.
    let agent = httpAgent(true)
    agents.push(agent)

    const record = (name: string, ms: number, status: number | string) => {
      requests++
      kind(name).add(ms, status)
      if (typeof status === 'number' && status >= 500) {
        fiveHundreds++
        problem(`${name}: HTTP ${status}`)
      }
    }
    const call = async (
      name: string,
      method: string,
      params: unknown,
      headers?: Record<string, string>,
    ): Promise<RpcReply> => {
      const reply = await rpc(url, method, params, { agent, headers, timeoutMs: requestTimeout })
      record(name, reply.ms, reply.status)
      if (reply.body?.error?.code === -32603) problem(`${name}: ${method} answered -32603 Internal error`)
      return reply
    }
    const stream = (
      name: string,
      body: string,
      headers?: Record<string, string>,
      onFrame?: (frame: SseFrame, index: number, s: OpenStream) => void,
    ): Promise<StreamResult> => {
      const s = openStream(url, body, { agent, headers, timeoutMs: requestTimeout, onFrame })
      open.add(s)
      return s.done.then((result) => {
        open.delete(s)
        record(name, result.ms, result.status || (result.timedOut ? 'timeout' : 'no answer'))
        if (result.timedOut) problem(`${name}: the stream did not end within ${requestTimeout} ms`)
        return result
      })
    }

    const begin = (name: string): Pick<Tracked, 'kind' | 'startedAt' | 'opsAtStart'> => ({
      kind: name,
      startedAt: Date.now(),
      opsAtStart: taskOps++,
    })
    const acknowledged = (start: Pick<Tracked, 'kind' | 'startedAt' | 'opsAtStart'>, id: string): Tracked => {
      counts.started++
      return { ...start, id }
    }
    const mayBeEvicted = (task: Tracked) =>
      taskOps - task.opsAtStart + options.concurrency + 16 >= options.maxTasks - Math.floor(options.maxTasks / 64) ||
      Date.now() - task.startedAt > options.ttlMs
    const remember = (task: Tracked, state: string) => {
      ended.set(task.id, { state, at: performance.now() })
      if (ended.size > 50_000) ended.delete(ended.keys().next().value!)
      recent.push({ task, state })
      if (recent.length > 512) recent.shift()
    }
    /** A task missing from the store: evicted if retention may have dropped it, else lost. */
    const missing = (task: Tracked, what: string) => {
      if (mayBeEvicted(task)) counts.evicted++
      else {
        counts.lost++
        problem(
          `LOST ${task.kind} ${task.id}: ${what}, ${taskOps - task.opsAtStart} task requests and ${Date.now() - task.startedAt} ms after it started`,
        )
      }
    }
    const stateOf = (reply: RpcReply): string | undefined => {
      const status = reply.body?.result?.status?.state
      return status === undefined ? undefined : v1State(status)
    }
    const isNotFound = (reply: RpcReply) => reply.body?.error?.message === NOT_FOUND

    /** Right after a task has ended: the store shows it in the state it ended in. */
    const verify = async (task: Tracked, expected: Expected[], v1 = false) => {
      const reply = v1 ? await call('get', 'GetTask', { id: task.id }) : await call('get', 'tasks/get', { id: task.id })
      if (isNotFound(reply)) return missing(task, 'not found right after it ended')
      const state = stateOf(reply)
      if (!state || !expected.includes(state as Expected)) {
        if (state === 'working' || state === 'submitted') counts.stuck++
        return problem(
          `${task.kind} ${task.id}: expected ${expected.join('|')}, the store has ${state ?? reply.text.slice(0, 200)}`,
        )
      }
      counts.verified++
      states[state] = (states[state] ?? 0) + 1
      remember(task, state)
    }
    /** A task the client did not see end (it left the stream): polls until it ends, for a while. */
    const awaitEnd = async (task: Tracked, expected: Expected[]) => {
      const until = Date.now() + patience
      for (;;) {
        const reply = await call('get', 'tasks/get', { id: task.id })
        if (isNotFound(reply)) return missing(task, 'not found while the client waited for it to end')
        const state = stateOf(reply)
        if (state && (TERMINAL.has(state) || state === 'input-required')) return verify(task, expected)
        if (Date.now() > until) {
          counts.stuck++
          return problem(
            `STUCK ${task.kind} ${task.id}: still ${state} ${Date.now() - task.startedAt} ms after it started`,
          )
        }
        await sleep(50)
      }
    }
    const expectStream = (name: string, result: StreamResult, expected: string[]) => {
      const got = summaries(result.frames)
      if (result.status !== 200 || !result.ended || JSON.stringify(got) !== JSON.stringify(expected)) {
        problem(
          `${name}: HTTP ${result.status}, ended ${result.ended}, events ${JSON.stringify(got)} (expected ${JSON.stringify(expected)}) ${result.text.slice(0, 200)}`,
        )
        return false
      }
      return true
    }

    const ops: Record<string, () => Promise<void>> = {
      async send() {
        const start = begin('send')
        const reply = await call('send', 'message/send', userMessage('hello'))
        const result = reply.body?.result
        if (!result?.id) return problem(`send: ${reply.text.slice(0, 200)}`)
        const task = acknowledged(start, result.id)
        if (result.status.state !== 'completed' || result.artifacts[0]?.parts[0]?.text !== 'echo hello')
          problem(`send ${task.id}: answered ${result.status.state}`)
        await verify(task, ['completed'])
      },
      async 'send-v1'() {
        const start = begin('send-v1')
        const reply = await call('send-v1', 'SendMessage', userMessageV1('hello'))
        const result = reply.body?.result?.task
        if (!result?.id) return problem(`send-v1: ${reply.text.slice(0, 200)}`)
        const task = acknowledged(start, result.id)
        if (result.status.state !== 'TASK_STATE_COMPLETED')
          problem(`send-v1 ${task.id}: answered ${result.status.state}`)
        await verify(task, ['completed'], true)
      },
      async fail() {
        const start = begin('fail')
        const reply = await call('send', 'message/send', userMessage('throw'))
        const result = reply.body?.result
        if (!result?.id) return problem(`fail: ${reply.text.slice(0, 200)}`)
        const task = acknowledged(start, result.id)
        if (result.status.state !== 'failed') problem(`fail ${task.id}: answered ${result.status.state}`)
        await verify(task, ['failed'])
      },
      async stream() {
        const start = begin('stream')
        const result = await stream('stream', jsonRpc('message/stream', userMessage(streamText(3, 5))))
        const id = taskIdOf(result.frames[0]?.data)
        if (!id) return problem(`stream: no task (HTTP ${result.status}) ${result.text.slice(0, 200)}`)
        const task = acknowledged(start, id)
        expectStream('stream', result, expectedStream(3, false))
        await verify(task, ['completed'])
      },
      async 'stream-v1'() {
        const start = begin('stream-v1')
        const result = await stream('stream-v1', jsonRpc('SendStreamingMessage', userMessageV1(streamText(3, 5))))
        const id = taskIdOf(result.frames[0]?.data)
        if (!id) return problem(`stream-v1: no task (HTTP ${result.status}) ${result.text.slice(0, 200)}`)
        const task = acknowledged(start, id)
        expectStream('stream-v1', result, expectedStream(3, true))
        await verify(task, ['completed'], true)
      },
      async 'multi-turn'() {
        const start = begin('multi-turn')
        const first = await call('send', 'message/send', userMessage('ask'))
        const result = first.body?.result
        if (!result?.id) return problem(`multi-turn: ${first.text.slice(0, 200)}`)
        const task = acknowledged(start, result.id)
        if (result.status.state !== 'input-required')
          return problem(`multi-turn ${task.id}: answered ${result.status.state}`)
        await sleep(Math.random() * 20)
        const resumed = begin('multi-turn')
        const follow = userMessage('B', { taskId: task.id })
        let state: string | undefined
        let artifacts: string[] = []
        if (Math.random() < 0.5) {
          const reply = await call('send', 'message/send', follow)
          if (isNotFound(reply)) return missing(task, 'not found for its follow-up')
          state = reply.body?.result?.status.state
          artifacts = (reply.body?.result?.artifacts ?? []).map((a: any) => a.parts[0].text)
        } else {
          const streamed = await stream('stream', jsonRpc('message/stream', follow))
          if (streamed.frames.length === 0 && JSON.parse(streamed.text || '{}').error?.message === NOT_FOUND)
            return missing(task, 'not found for its follow-up')
          const got = summaries(streamed.frames)
          state = got.at(-1) === 'status:completed:final' ? 'completed' : got.at(-1)
          artifacts = ['draft', ...got.filter((s) => s.startsWith('artifact:')).map((s) => s.slice('artifact:'.length))]
        }
        Object.assign(task, { startedAt: resumed.startedAt, opsAtStart: resumed.opsAtStart })
        if (state !== 'completed' || JSON.stringify(artifacts) !== JSON.stringify(['draft', 'chose B']))
          problem(`multi-turn ${task.id}: the follow-up ended ${state} with ${JSON.stringify(artifacts)}`)
        await verify(task, ['completed'])
      },
      async abandon() {
        // Asks for input and is never answered: settled, it waits for retention.
        const start = begin('abandon')
        const reply = await call('send', 'message/send', userMessage('ask'))
        const result = reply.body?.result
        if (!result?.id) return problem(`abandon: ${reply.text.slice(0, 200)}`)
        await verify(acknowledged(start, result.id), ['input-required'])
      },
      async cancel() {
        const start = begin('cancel')
        const v1 = Math.random() < 0.5
        const reply = v1
          ? await call('send-v1', 'SendMessage', {
              ...userMessageV1('slow:5000'),
              configuration: { returnImmediately: true },
            })
          : await call('send', 'message/send', { ...userMessage('slow:5000'), configuration: { blocking: false } })
        const id = v1 ? reply.body?.result?.task?.id : reply.body?.result?.id
        if (!id) return problem(`cancel: ${reply.text.slice(0, 200)}`)
        const task = acknowledged(start, id)
        await sleep(5 + Math.random() * 50)
        const canceled = v1 ? await call('cancel', 'CancelTask', { id }) : await call('cancel', 'tasks/cancel', { id })
        if (isNotFound(canceled)) return missing(task, 'not found for its cancel')
        if (stateOf(canceled) !== 'canceled') problem(`cancel ${id}: answered ${canceled.text.slice(0, 200)}`)
        await verify(task, ['canceled'], v1)
      },
      async get() {
        const known = recent[Math.floor(Math.random() * recent.length)]
        if (!known) return
        const reply = await call('get', 'tasks/get', { id: known.task.id })
        if (isNotFound(reply)) {
          if (mayBeEvicted(known.task)) counts.evictedOnLaterGet++
          else missing(known.task, 'not found on a later get')
          return
        }
        const state = stateOf(reply)
        if (state !== known.state)
          problem(`get ${known.task.id}: ended ${known.state}, now ${state ?? reply.text.slice(0, 200)}`)
      },
      async list() {
        const filter = Math.random() < 0.3 ? { status: 'TASK_STATE_COMPLETED' } : {}
        const sentAt = performance.now()
        const first = await call('list', 'ListTasks', { pageSize: 50, ...filter })
        const page = first.body?.result
        if (!page) return problem(`list: ${first.text.slice(0, 200)}`)
        // Retention holds: never more than maxTasks settled tasks plus the running ones.
        if (page.totalSize > options.maxTasks + options.maxRunning)
          problem(`list: ${page.totalSize} tasks held, past maxTasks ${options.maxTasks} + running`)
        const pages = [page]
        if (page.nextPageToken && Math.random() < 0.5) {
          const next = await call('list', 'ListTasks', { pageSize: 50, ...filter, pageToken: page.nextPageToken })
          if (next.body?.result) pages.push(next.body.result)
          else if (next.body?.error?.code !== -32602) problem(`list page 2: ${next.text.slice(0, 200)}`)
        }
        for (const listed of pages.flatMap((p) => p.tasks)) {
          const was = ended.get(listed.id)
          if (was !== undefined && was.at < sentAt && v1State(listed.status.state) !== was.state)
            problem(`list: task ${listed.id} ended ${was.state}, listed ${listed.status.state}`)
        }
      },
      async resubscribe() {
        const start = begin('resubscribe')
        const v1 = Math.random() < 0.5
        const reply = await call('send', 'message/send', {
          ...userMessage(streamText(4, 15)),
          configuration: { blocking: false },
        })
        const id = reply.body?.result?.id
        if (!id) return problem(`resubscribe: ${reply.text.slice(0, 200)}`)
        const task = acknowledged(start, id)
        const result = await stream(
          'resubscribe',
          v1 ? jsonRpc('SubscribeToTask', { id }) : jsonRpc('tasks/resubscribe', { id }),
        )
        if (result.frames.length === 0) {
          // It ended before the subscription arrived (a slow machine): an error, not a stream.
          const error = JSON.parse(result.text || '{}').error
          if (!/finished task has no more events/.test(error?.message ?? ''))
            problem(`resubscribe ${id}: HTTP ${result.status} ${result.text.slice(0, 200)}`)
          else counts.lateResubscribes++
        } else {
          const got = summaries(result.frames)
          if (
            result.status !== 200 ||
            !result.ended ||
            got.at(-1) !== 'status:completed:final' ||
            !/^(task|status):working/.test(got[0] ?? '')
          )
            problem(`resubscribe ${id}: HTTP ${result.status}, events ${JSON.stringify(got)}`)
        }
        await verify(task, ['completed'])
      },
      async resume() {
        // Leaves a numbered stream after its second event, then resumes it with Last-Event-ID: together
        // the two streams carry every event once, in order.
        const start = begin('resume')
        const v1 = Math.random() < 0.5
        const body = v1
          ? jsonRpc('SendStreamingMessage', userMessageV1(streamText(4, 15)))
          : jsonRpc('message/stream', userMessage(streamText(4, 15)))
        const first = await stream(
          'stream',
          body,
          v1 ? undefined : { 'last-event-id': '0' },
          (_frame, index, s) => index === 2 && s.destroy(),
        )
        const id = taskIdOf(first.frames[0]?.data)
        if (!id) return problem(`resume: no task (HTTP ${first.status}) ${first.text.slice(0, 200)}`)
        const task = acknowledged(start, id)
        const lastId = first.frames.at(-1)?.id
        if (first.frames.length !== 3 || lastId === undefined)
          return problem(
            `resume ${id}: the first stream had ${JSON.stringify(summaries(first.frames))} ids ${first.frames.map((f) => f.id)}`,
          )
        const rest = await stream(
          'resubscribe',
          v1 ? jsonRpc('SubscribeToTask', { id }) : jsonRpc('tasks/resubscribe', { id }),
          {
            'last-event-id': String(lastId),
          },
        )
        if (rest.frames.length === 0) {
          const error = JSON.parse(rest.text || '{}').error
          // The store keeps the events of the last `endedLogs` (1,000) tasks to end.
          if (!/no longer kept/.test(error?.message ?? '') || taskOps - task.opsAtStart < 500)
            problem(`resume ${id}: HTTP ${rest.status} ${rest.text.slice(0, 200)}`)
        } else {
          const all = [...first.frames, ...rest.frames]
          const ids = rest.frames.map((f) => f.id!)
          const consecutive = ids.every((n, i) => n === lastId + 1 + i)
          if (!expectStream('resume', { ...rest, frames: all }, expectedStream(4, v1)) || !consecutive)
            problem(`resume ${id}: resumed after ${lastId} with ids ${JSON.stringify(ids)}`)
        }
        await verify(task, ['completed'], v1)
      },
      async disconnect() {
        // Leaves mid-stream: the task runs on to its end, and the server lets the connection go.
        const start = begin('disconnect')
        const v1 = Math.random() < 0.5
        const body = v1
          ? jsonRpc('SendStreamingMessage', userMessageV1(streamText(5, 20)))
          : jsonRpc('message/stream', userMessage(streamText(5, 20)))
        const result = await stream('disconnect', body, undefined, (_frame, index, s) => index === 1 && s.destroy())
        const id = taskIdOf(result.frames[0]?.data)
        if (!id) return problem(`disconnect: no task (HTTP ${result.status}) ${result.text.slice(0, 200)}`)
        await awaitEnd(acknowledged(start, id), ['completed'])
      },
      async 'disconnect-send'() {
        // Leaves a blocking send before the answer: the task is never acknowledged; the drain finds none stuck.
        begin('disconnect-send')
        const started = performance.now()
        await new Promise<void>((resolve) => {
          const socket = connect({ host: '127.0.0.1', port: server!.port })
          const body = jsonRpc('message/send', userMessage('slow:30'))
          socket.once('connect', () => {
            socket.write(
              `POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
            )
            setTimeout(() => socket.destroy(), 5)
          })
          socket.once('close', () => resolve())
          socket.once('error', () => {})
        })
        record('disconnect-send', performance.now() - started, 'left')
      },
      async card() {
        const started = performance.now()
        const reply = await new Promise<number>((resolve, reject) => {
          httpGet(`${url}.well-known/agent-card.json`, { agent }, (res) => {
            res.resume()
            res.once('end', () => resolve(res.statusCode!))
          }).once('error', reject)
        })
        record('card', performance.now() - started, reply)
        if (reply !== 200) problem(`card: HTTP ${reply}`)
      },
      async bad() {
        const which = Math.floor(Math.random() * 11)
        const expectError = (reply: RpcReply, code: number, status = 200) => {
          if (reply.status !== status || reply.body?.error?.code !== code)
            problem(
              `bad #${which}: expected HTTP ${status} and ${code}, got HTTP ${reply.status} ${reply.text.slice(0, 200)}`,
            )
        }
        const raw = async (body: string, headers?: Record<string, string>) => {
          const reply = await post(url, body, { agent, headers, timeoutMs: requestTimeout })
          record('bad', reply.ms, reply.status)
          let parsed: unknown
          try {
            parsed = JSON.parse(reply.text)
          } catch {}
          return { ...reply, body: parsed } as RpcReply
        }
        switch (which) {
          case 0:
            return expectError(await raw('{"jsonrpc": "2.0", "id": 1, "method": '), -32700)
          case 1:
            return expectError(await call('bad', 'no/such/method', {}), -32601)
          case 2:
            return expectError(await call('bad', 'message/send', { message: { role: 'user' } }), -32602)
          case 3:
            return expectError(
              await raw(jsonRpc('message/send', userMessage('x')), { 'content-type': 'text/plain' }),
              -32600,
              415,
            )
          case 4:
            return expectError(await call('bad', 'tasks/get', { id: 'no-such-task' }), -32602)
          case 5: {
            const known = recent.find((r) => r.state === 'completed')
            if (!known) return
            const reply = await call('bad', 'tasks/cancel', { id: known.task.id })
            if (!isNotFound(reply)) expectError(reply, -32002)
            return
          }
          case 6: {
            const known = recent.find((r) => r.state === 'completed')
            if (!known) return
            taskOps++
            const reply = await call('bad', 'message/send', userMessage('again', { taskId: known.task.id }))
            if (!isNotFound(reply)) expectError(reply, -32602)
            return
          }
          case 7:
            return expectError(
              await raw(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } }])),
              -32600,
            )
          case 8:
            return expectError(await call('bad', 'message/stream', userMessage('x'), { 'last-event-id': '5' }), -32602)
          case 9: {
            // A body that stops halfway: the client goes away mid-request.
            const started = performance.now()
            await new Promise<void>((resolve) => {
              const socket = connect({ host: '127.0.0.1', port: server!.port })
              socket.once('connect', () => {
                socket.write(
                  'POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n{"jsonrpc":"2.0","id":1,',
                )
                setTimeout(() => socket.destroy(), 5)
              })
              socket.once('close', () => resolve())
              socket.once('error', () => {})
            })
            return record('bad', performance.now() - started, 'left')
          }
          default: {
            // A declared body past the 1 MiB limit: 413 before the body is read, and the connection closes.
            const started = performance.now()
            const status = await new Promise<number | string>((resolve) => {
              const socket = connect({ host: '127.0.0.1', port: server!.port })
              let head = ''
              const timer = setTimeout(() => {
                socket.destroy()
                resolve('timeout')
              }, requestTimeout)
              socket.once('connect', () =>
                socket.write(
                  'POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 2000000\r\n\r\n{"jsonrpc":',
                ),
              )
              socket.setEncoding('utf8').on('data', (chunk: string) => {
                head += chunk
                const match = /^HTTP\/1\.1 (\d{3})/.exec(head)
                if (match) {
                  clearTimeout(timer)
                  socket.destroy()
                  resolve(Number(match[1]))
                }
              })
              socket.once('close', () => {
                clearTimeout(timer)
                resolve(head ? 'garbled' : 'closed')
              })
              socket.once('error', () => {})
            })
            record('bad', performance.now() - started, status)
            if (status !== 413) problem(`bad #${which}: an oversized body got ${status}, not 413`)
          }
        }
      },
    }

    const runMix = async (until: number) => {
      const worker = async () => {
        while (performance.now() < until) {
          const name = pick()
          opCounts.set(name, (opCounts.get(name) ?? 0) + 1)
          try {
            await ops[name]!()
          } catch (error) {
            problem(`${name}: ${error instanceof Error ? error.message : String(error)}`)
          }
        }
      }
      await Promise.all(Array.from({ length: options.concurrency }, worker))
    }

    // Warm-up: every kind a few times, so what the server keeps for good (compiled code, caches) is in the
    // baseline; then the store is left to empty, and the baseline is read with no client connected.
    await runMix(performance.now() + (options.warmupMs ?? 1_500))
    kinds.clear()
    opCounts.clear()
    for (const state of Object.keys(states)) delete states[state]
    requests = 0
    agent.destroy()
    agents.splice(agents.indexOf(agent), 1)
    const rested = await pollUntil(
      () => server!.probe(),
      (p) => p.connections === 0 && (p.storeSize === 0 || problems.length > 0),
      retentionWait,
      200,
    )
    if (rested.storeSize !== 0) problem(`warm-up: ${rested.storeSize} tasks still held ${retentionWait} ms after it`)
    const baseline = await server.probe({ gc: true })
    const baselineFds = fdsOf(pid)?.total
    const baselineRss = rssOf(pid)?.rss ?? baseline.memory.rss
    const warmTaskOps = taskOps
    const warmCounts = { ...counts }

    // The soak.
    const soakAgent = httpAgent(true)
    agents.push(soakAgent)
    let peakFds = baselineFds ?? 0
    let peakRss = baselineRss
    let peakActive = 0
    sampler = setInterval(() => {
      const fds = fdsOf(pid)
      if (fds) peakFds = Math.max(peakFds, fds.total)
      const rss = rssOf(pid)
      if (rss) peakRss = Math.max(peakRss, rss.rss)
    }, 250)
    const probes = setInterval(() => {
      server!.probe().then(
        (p) => (peakActive = Math.max(peakActive, p.active)),
        () => {},
      )
    }, 1_000)
    agent = soakAgent
    const began = performance.now()
    await runMix(began + options.seconds * 1000)
    const ranMs = performance.now() - began
    clearInterval(probes)

    // Drain: no task left running or waiting to start once every worker has finished.
    const idle = await pollUntil(
      () => server!.probe(),
      (p) => p.active === 0,
      patience,
    )
    if (idle.active !== 0) {
      counts.stuck += idle.active
      problem(`STUCK: the agent still runs ${idle.active} tasks ${patience} ms after the last request`)
    }
    peakActive = Math.max(peakActive, idle.peak)
    for (const state of ['TASK_STATE_WORKING', 'TASK_STATE_SUBMITTED']) {
      const reply = await pollUntil(
        () => call('list', 'ListTasks', { pageSize: 10, status: state }),
        (r) => r.body?.result?.totalSize === 0,
        idle.active === 0 ? patience / 2 : 0,
      )
      const left = reply.body?.result?.totalSize
      if (left !== 0) {
        counts.stuck += left ?? 0
        problem(
          `STUCK: ${left} tasks ${state} after the drain: ${JSON.stringify(reply.body?.result?.tasks?.map((t: any) => t.id))}`,
        )
      }
    }
    // The clients go: the server's descriptors come back to the baseline.
    for (const s of open) s.destroy()
    soakAgent.destroy()
    const closed = await pollUntil(
      () => server!.probe(),
      (p) => p.connections === 0,
      patience,
    )
    if (closed.connections !== 0)
      problem(`the server still holds ${closed.connections} connections ${patience} ms after the clients left`)
    let afterFds: number | undefined
    if (baselineFds !== undefined) {
      afterFds = (await pollUntil(
        () => fdsOf(pid)?.total ?? Number.POSITIVE_INFINITY,
        (n) => n <= baselineFds + 2,
        patience,
      )) as number
    }
    // Retention empties the store (ttl), then memory is read after a collection. A stuck task is never
    // dropped (running tasks are kept), so after one there is no point in waiting.
    const emptied = await pollUntil(
      () => server!.probe(),
      (p) => p.storeSize === 0,
      counts.stuck > 0 ? 0 : retentionWait,
      200,
    )
    if (emptied.storeSize !== 0)
      problem(`retention: ${emptied.storeSize} tasks still held ${retentionWait} ms after the soak`)
    const after = await server.probe({ gc: true })
    const afterRss = rssOf(pid)?.rss ?? after.memory.rss
    peakRss = Math.max(peakRss, rssOf(pid)?.peak ?? 0)
    if (after.logged.error > 0 || after.logged.warn > 0)
      problem(
        `the server logged ${after.logged.error} errors and ${after.logged.warn} warnings: ${after.logged.last.join(' | ').slice(0, 2000)}`,
      )
    if (after.finished !== after.started) problem(`agent turns started ${after.started}, finished ${after.finished}`)

    const soakCounts = {
      started: counts.started - warmCounts.started,
      verified: counts.verified - warmCounts.verified,
      evicted: counts.evicted - warmCounts.evicted,
      lost: counts.lost,
      stuck: counts.stuck,
      evictedOnLaterGet: counts.evictedOnLaterGet - warmCounts.evictedOnLaterGet,
      lateResubscribes: counts.lateResubscribes - warmCounts.lateResubscribes,
    }
    const memory = {
      baselineHeap: baseline.memory.heapUsed,
      baselineRss,
      peakRss,
      afterHeap: after.memory.heapUsed,
      afterRss,
      storeAfter: emptied.storeSize,
    }
    const fds =
      baselineFds === undefined ? undefined : { baseline: baselineFds, peak: peakFds, after: afterFds ?? Number.NaN }
    const report = formatReport({
      options,
      ranMs,
      kinds,
      opCounts,
      soakCounts,
      states,
      requests,
      fiveHundreds,
      memory,
      fds,
      peakActive,
      taskOps: taskOps - warmTaskOps,
      problems,
      after,
    })
    print(report)
    return { problems, report, tasks: { ...soakCounts, states }, requests, fiveHundreds, memory, fds, peakActive }
  } finally {
    clearInterval(sampler)
    for (const s of open) s.destroy()
    for (const a of agents) a.destroy()
    await server?.kill()
  }
}

function formatReport(r: {
  options: SoakOptions
  ranMs: number
  kinds: Map<string, Kind>
  opCounts: Map<string, number>
  soakCounts: {
    started: number
    verified: number
    evicted: number
    lost: number
    stuck: number
    evictedOnLaterGet: number
    lateResubscribes: number
  }
  states: Record<string, number>
  requests: number
  fiveHundreds: number
  memory: SoakResult['memory']
  fds: SoakResult['fds']
  peakActive: number
  taskOps: number
  problems: string[]
  after: Probe
}): string {
  const seconds = r.ranMs / 1000
  const lines = [
    `Mixed soak: ${seconds.toFixed(1)} s, ${r.options.concurrency} workers; agent process with maxTasks ${r.options.maxTasks}, ttlMs ${r.options.ttlMs}, maxRunningTasks ${r.options.maxRunning}, maxStreams ${r.options.maxStreams}`,
    '',
    `${'kind'.padEnd(18)}${'requests'.padStart(10)}${'per s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}  answers`,
  ]
  let total = 0
  for (const [name, k] of [...r.kinds].sort((a, b) => b[1].ms.length - a[1].ms.length)) {
    total += k.ms.length
    const answers = [...k.statuses].map(([status, n]) => `${status}×${n}`).join(' ')
    lines.push(
      `${name.padEnd(18)}${String(k.ms.length).padStart(10)}${(k.ms.length / seconds).toFixed(1).padStart(9)}${k.quantile(0.5).toFixed(1).padStart(9)}${k.quantile(0.99).toFixed(1).padStart(9)}  ${answers}`,
    )
  }
  lines.push(`${'all'.padEnd(18)}${String(total).padStart(10)}${(total / seconds).toFixed(1).padStart(9)}`)
  const c = r.soakCounts
  const heapPerTask = (r.memory.afterHeap - r.memory.baselineHeap) / Math.max(1, c.started)
  lines.push(
    '',
    `operations: ${[...r.opCounts]
      .sort((a, b) => b[1] - a[1])
      .map(([name, n]) => `${name} ${n}`)
      .join(', ')}`,
    `tasks: ${c.started} acknowledged (${r.taskOps} requests that start or resume one); checked right after they ended: ${c.verified} (${Object.entries(
      r.states,
    )
      .map(([state, n]) => `${state} ${n}`)
      .join(
        ', ',
      )}); evicted by retention before a check (accounted): ${c.evicted}; later gets that found a task evicted (accounted): ${c.evictedOnLaterGet}; resubscriptions that came after the end: ${c.lateResubscribes}; lost: ${c.lost}; stuck: ${c.stuck}`,
    `5xx: ${r.fiveHundreds}; server errors logged: ${r.after.logged.error}, warnings: ${r.after.logged.warn} (apart: ${r.after.logged.expectedErrors} for the failing agent); agent turns ${r.after.started} started, ${r.after.finished} finished, at most ${r.peakActive} at once (sampled)`,
    `rss: baseline ${mb(r.memory.baselineRss)}, peak ${mb(r.memory.peakRss)}, after retention + GC ${mb(r.memory.afterRss)}`,
    `heap used: baseline ${mb(r.memory.baselineHeap)}, after retention + GC ${mb(r.memory.afterHeap)} (${heapPerTask.toFixed(0)} bytes per task); store ${r.memory.storeAfter} tasks`,
    r.fds ? `fds: baseline ${r.fds.baseline}, peak ${r.fds.peak}, after ${r.fds.after}` : 'fds: n/a (no /proc)',
    `problems: ${r.problems.length === 0 ? 'none' : `${r.problems.length}\n  ${r.problems.slice(0, 20).join('\n  ')}`}`,
  )
  return lines.join('\n')
}

/** Heap the server may keep above its warmed-up baseline once retention has emptied the store. */
const HEAP_MARGIN = 8 * 1024 * 1024
/** Resident memory the same: V8 and the allocator keep some pages, but nothing may grow with the tasks. */
const RSS_MARGIN = 96 * 1024 * 1024

/** What every soak asserts: no problem (nothing lost, stuck, wrong or 5xx), memory and fds back. */
export function expectSoakHeld(result: SoakResult): void {
  expect(result.problems, result.report).toEqual([])
  expect(result.tasks.lost).toBe(0)
  expect(result.tasks.stuck).toBe(0)
  expect(result.fiveHundreds).toBe(0)
  expect(result.tasks.verified).toBeGreaterThan(0)
  // Retention emptied the store; what the server holds after a collection is back near its baseline.
  expect(result.memory.storeAfter).toBe(0)
  expect(result.memory.afterHeap, result.report).toBeLessThan(result.memory.baselineHeap + HEAP_MARGIN)
  expect(result.memory.afterRss, result.report).toBeLessThan(result.memory.baselineRss + RSS_MARGIN)
  if (result.fds) expect(result.fds.after, result.report).toBeLessThanOrEqual(result.fds.baseline + 2)
}
