import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createA2AApp, defineAgent } from 'a2a-runtime'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readSendParams } from '../../runtime/src/bindings/shared/_slash-params.ts'
import { userMessageBytes } from '../../runtime/src/core/_task-bytes.ts'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import { call, MiB, mib, pollUntil, readingSubscriber, rpcBody, rssOf, sampleRss } from './_slow-readers.ts'
import { type BudgetsAgent, chatText, GET_TASK_DIALECTS, rpc, startBudgetsAgent, userText } from './_task-budgets.ts'

/**
 * Tasks bounded in bytes, against an agent process on 127.0.0.1 whose RSS is read from /proc: maxTaskBytes (the
 * most one task holds; a follow-up past it refused, an agent's output past it failing the task) and
 * maxRunningBytes (the most the running tasks hold together; a send past it gets 429). The full-strength attack
 * with default settings, 1,000 follow-ups of 1 MiB on one task, is the soak (`npm run soak -- follow-ups`).
 */

const ENV = ['A2A_MAX_TASK_BYTES', 'A2A_MAX_RUNNING_BYTES'] as const
const DEFAULT_MAX_TASK_BYTES = 8 * MiB
/** What a task's JSON on the wire may hold beyond its counted bytes: ids, timestamps, a dialect's field names. */
const WIRE_SLACK = 64 * 1024

let agent: BudgetsAgent | undefined
const savedEnv: Partial<Record<(typeof ENV)[number], string>> = {}

beforeEach(() => {
  for (const name of ENV) {
    savedEnv[name] = process.env[name]
    delete process.env[name]
  }
})

afterEach(async () => {
  await agent?.kill()
  agent = undefined
  for (const name of ENV) {
    if (savedEnv[name] === undefined) delete process.env[name]
    else process.env[name] = savedEnv[name]
  }
})

/** The size the refusal says the task would reach, from its message. */
const wouldHold = (message: string) => Number(/the task would hold (\d+) bytes/.exec(message)?.[1])

describe('maxTaskBytes: follow-ups on one task', () => {
  it('refuses the follow-up of about 1 MiB that would take a task past 8 MiB (the default) with -32602 naming maxTaskBytes and the sizes (sent, streamed or in A2A v1.0); the task is unchanged, answers tasks/get in every dialect and takes a smaller follow-up', {
    timeout: 90_000,
  }, async () => {
    agent = await startBudgetsAgent()
    const first = await rpc(agent.port, 'message/send', userText('chat start'))
    const taskId: string = first.body.result.id
    expect(first.body.result.status.state).toBe('input-required')

    let accepted = 0
    let refusal: Awaited<ReturnType<typeof rpc>> | undefined
    // Bodies of 1 MiB less 4 KiB: the eight that fit leave room for a short follow-up (and the agent's question).
    const text = chatText(MiB - 4096)
    for (let i = 0; i < 12 && !refusal; i++) {
      const answer = await rpc(agent.port, 'message/send', userText(text, taskId))
      if (answer.body.error) refusal = answer
      else {
        expect(answer.body.result.status.state).toBe('input-required')
        accepted++
      }
    }
    // 8 MiB holds eight messages of just under 1 MiB (and the agent's short questions), not nine.
    expect(accepted).toBe(8)
    expect(refusal!.status).toBe(200)
    expect(refusal!.body.error!.code).toBe(-32602)
    expect(refusal!.body.error!.message).toMatch(
      /^Invalid params: message: the task would hold \d+ bytes, more than maxTaskBytes \(8388608\); start a new task$/,
    )
    expect(wouldHold(refusal!.body.error!.message)).toBeGreaterThan(DEFAULT_MAX_TASK_BYTES)

    // The same refusal when the follow-up comes as a stream, or from an A2A v1.0 client.
    const streamed = await call(agent.port, rpcBody('message/stream', userText(text, taskId)))
    expect(streamed.status).toBe(200)
    expect(streamed.headers['content-type']).toMatch(/^application\/json/)
    expect(JSON.parse(streamed.text).error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/more than maxTaskBytes \(8388608\); start a new task$/),
    })
    const v1 = await rpc(
      agent.port,
      'SendMessage',
      { message: { messageId: 'v1-follow-up', role: 'ROLE_USER', taskId, parts: [{ text }] } },
      { 'A2A-Version': '1.0' },
    )
    expect(v1.status).toBe(200)
    expect(v1.body.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/more than maxTaskBytes \(8388608\); start a new task$/),
    })

    // The largest task the limit allows answers in every dialect, whole, within the limit (and its wire slack).
    for (const { dialect, method, headers } of GET_TASK_DIALECTS) {
      const got = await rpc(agent.port, method, { id: taskId }, headers)
      expect(got.status, dialect).toBe(200)
      expect(got.body.error, dialect).toBeUndefined()
      expect(got.body.result.id, dialect).toBe(taskId)
      // The first message and question, then each accepted follow-up and its question: the refused one is not there.
      expect(got.body.result.history, dialect).toHaveLength(2 + 2 * accepted)
      expect(got.chars, dialect).toBeGreaterThan(DEFAULT_MAX_TASK_BYTES - 64 * 1024)
      expect(got.chars, dialect).toBeLessThan(DEFAULT_MAX_TASK_BYTES + WIRE_SLACK)
      console.log(
        `tasks/get of a task at maxTaskBytes (${dialect}): ${got.chars} characters in ${got.ms.toFixed(0)} ms`,
      )
    }

    const small = await rpc(agent.port, 'message/send', userText('chat a short one', taskId))
    expect(small.body.error).toBeUndefined()
    expect(small.body.result.status.state).toBe('input-required')
    expect(small.body.result.history).toHaveLength(4 + 2 * accepted)
    const probe = await agent.probe()
    console.log(
      `maxTaskBytes 8 MiB: ${accepted} follow-ups of 1 MiB accepted, the next refused (would hold ${wouldHold(refusal!.body.error!.message)} bytes); agent RSS ${mib(rssOf(agent.pid)!.rss)}`,
    )
    expect(probe.logged).toMatchObject({ warn: 0, error: 0 })
  })

  it('1,000 follow-ups of 16 KiB on one task with maxTaskBytes 2 MiB: those that fit are accepted, every other one refused with -32602 (no other answer), RSS + under 128 MiB, tasks/get works at the end', {
    timeout: 120_000,
  }, async () => {
    agent = await startBudgetsAgent({ A2A_MAX_TASK_BYTES: String(2 * MiB) })
    const taskId: string = (await rpc(agent.port, 'message/send', userText('chat start'))).body.result.id
    await agent.probe({ gc: true })
    const before = rssOf(agent.pid)!.rss
    const rss = sampleRss(agent.pid)
    const text = chatText(16 * 1024)
    const outcomes = { accepted: 0, refused: 0, other: [] as string[] }
    let firstRefused = -1
    for (let i = 0; i < 1_000; i++) {
      const answer = await rpc(agent.port, 'message/send', userText(text, taskId))
      if (answer.body.result?.status.state === 'input-required') outcomes.accepted++
      else if (
        answer.body.error?.code === -32602 &&
        /more than maxTaskBytes \(2097152\)/.test(answer.body.error.message)
      ) {
        outcomes.refused++
        if (firstRefused === -1) firstRefused = i
      } else outcomes.other.push(JSON.stringify(answer.body).slice(0, 300))
    }
    const peak = rss.stop()
    const got = await rpc(agent.port, 'tasks/get', { id: taskId })
    console.log(
      `1,000 follow-ups of 16 KiB, maxTaskBytes 2 MiB: ${outcomes.accepted} accepted, ${outcomes.refused} refused; agent RSS ${mib(before)} before, peak ${mib(peak)} (+${mib(peak - before)}); tasks/get ${got.chars} characters in ${got.ms.toFixed(0)} ms`,
    )
    expect(outcomes.other).toEqual([])
    // 2 MiB holds about 125 messages of 15,872 characters (with the agent's short questions and the messages' ids
    // and objects, about a thousand bytes of memory a turn): the first ones fit, and once one is refused so is
    // every later one.
    expect(outcomes.accepted).toBeGreaterThanOrEqual(Math.floor((2 * MiB) / (text.length + 1200)))
    expect(outcomes.accepted).toBeLessThanOrEqual(Math.floor((2 * MiB) / text.length))
    expect(firstRefused).toBe(outcomes.accepted)
    expect(outcomes.refused).toBe(1_000 - outcomes.accepted)
    expect(peak - before).toBeLessThan(128 * MiB)
    expect(got.body.result.status.state).toBe('input-required')
    expect(got.body.result.history).toHaveLength(2 + 2 * outcomes.accepted)
    expect(got.chars).toBeLessThan(2 * MiB + WIRE_SLACK)
    expect((await agent.probe()).logged).toMatchObject({ warn: 0, error: 0 })
  })
})

describe('maxTaskBytes on the file store', () => {
  it('counts a task read back after a restart: the follow-up past the limit is still refused, a smaller one taken', {
    timeout: 90_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'task-budgets-'))
    try {
      const env = { A2A_STORE: `file:${dir}`, A2A_MAX_TASK_BYTES: String(2 * MiB) }
      agent = await startBudgetsAgent(env)
      const taskId: string = (await rpc(agent.port, 'message/send', userText('chat start'))).body.result.id
      // Three of 600 KiB fit in 2 MiB, a fourth does not.
      const text = chatText(600 * 1024)
      for (let i = 0; i < 3; i++)
        expect((await rpc(agent.port, 'message/send', userText(text, taskId))).body.result?.status.state).toBe(
          'input-required',
        )
      await agent.kill()
      agent = await startBudgetsAgent(env)
      const refused = await rpc(agent.port, 'message/send', userText(text, taskId))
      expect(refused.body.error?.code).toBe(-32602)
      expect(wouldHold(refused.body.error!.message)).toBeGreaterThan(2 * MiB)
      const small = await rpc(agent.port, 'message/send', userText('chat a short one', taskId))
      expect(small.body.result?.status.state).toBe('input-required')
      expect(small.body.result.history).toHaveLength(2 + 2 * 4)
    } finally {
      await agent?.kill()
      agent = undefined
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('maxTaskBytes: an agent whose output passes it', () => {
  it('fails the task when an artifact would take it past the limit: the artifact is not applied, the reason is in the status message, the stream ends with the failed event, the later moves are refused', {
    timeout: 60_000,
  }, async () => {
    agent = await startBudgetsAgent({ A2A_MAX_TASK_BYTES: String(2 * MiB) })
    // Artifacts of 512 Ki characters: three fit in 2 MiB, the fourth does not.
    const { status, events } = await readingSubscriber(
      agent.port,
      rpcBody('message/stream', userText(`grow:8:${512 * 1024}`)),
    )
    expect(status).toBe(200)
    // The platform dialect streams notifications: the task, its status and artifact updates, each in `params`.
    expect(events.every((event) => event.error === undefined)).toBe(true)
    expect(events.filter((event) => event.method === 'tasks/artifactUpdate')).toHaveLength(3)
    const last = events.at(-1).params
    expect(last).toMatchObject({ final: true, status: { state: 'failed' } })
    const reason: string = last.status.message.parts[0].text
    expect(reason).toMatch(
      /^The task passed maxTaskBytes \(2097152\): an artifact would add \d+ bytes and make it hold \d+$/,
    )

    const got = await rpc(agent.port, 'tasks/get', { id: last.taskId })
    expect(got.body.result.status).toMatchObject({
      state: 'failed',
      message: { parts: [{ kind: 'text', text: reason }] },
    })
    expect(got.body.result.artifacts).toHaveLength(3)
    expect(got.chars).toBeLessThan(2 * MiB + WIRE_SLACK)
    // The agent's next artifact was refused (TaskTerminalError), as after a deadline; the runtime said why it failed
    // the task.
    const probe = await pollUntil(
      () => agent!.probe(),
      (p) => p.lateMoves >= 1,
      10_000,
    )
    expect(probe.lateMoves).toBe(1)
    expect(probe.logged.warn).toBe(1)
    expect(probe.logged.last[0]).toMatch(
      /task \S+ is failed: The task passed maxTaskBytes \(2097152\): an artifact would add/,
    )
    expect(probe.logged.error).toBe(0)
  })

  it('fails the task when a status message would take it past the limit, and answers the blocking send with the failed task (no -32603)', {
    timeout: 60_000,
  }, async () => {
    agent = await startBudgetsAgent({ A2A_MAX_TASK_BYTES: String(MiB) })
    const answer = await rpc(agent.port, 'message/send', userText(`ask:${2 * MiB}`))
    expect(answer.status).toBe(200)
    expect(answer.body.error).toBeUndefined()
    expect(answer.body.result.status.state).toBe('failed')
    expect(answer.body.result.status.message.parts[0].text).toMatch(
      /^The task passed maxTaskBytes \(1048576\): a status message would add \d+ bytes and make it hold \d+$/,
    )
    // The question was not kept: the task holds the user's message and the reason.
    expect(answer.body.result.history).toHaveLength(1)
    expect(answer.chars).toBeLessThan(WIRE_SLACK)
    const got = await rpc(agent.port, 'tasks/get', { id: answer.body.result.id })
    expect(got.body.result.status.state).toBe('failed')
  })

  it('fails the task whose agent sends an artifact JSON cannot hold (a cycle), with the reason, and answers it', {
    timeout: 30_000,
  }, async () => {
    agent = await startBudgetsAgent()
    const answer = await rpc(agent.port, 'message/send', userText('cycle'))
    expect(answer.status).toBe(200)
    expect(answer.body.result.status.state).toBe('failed')
    expect(answer.body.result.status.message.parts[0].text).toBe(
      'The agent sent an artifact that cannot be written as JSON (a cycle or a BigInt)',
    )
    expect(answer.body.result.artifacts ?? []).toEqual([])
    expect((await rpc(agent.port, 'tasks/get', { id: answer.body.result.id })).body.result.status.state).toBe('failed')
    expect((await agent.probe()).lateMoves).toBe(1)
  })

  it('refuses a first message larger than the limit with -32602 before any task exists', {
    timeout: 30_000,
  }, async () => {
    agent = await startBudgetsAgent({ A2A_MAX_TASK_BYTES: String(64 * 1024) })
    const answer = await rpc(agent.port, 'message/send', userText(chatText(128 * 1024)))
    expect(answer.body.error?.code).toBe(-32602)
    expect(answer.body.error?.message).toMatch(
      /^Invalid params: message: a message of \d+ bytes is more than maxTaskBytes \(65536\), the most one task may hold$/,
    )
    expect((await rpc(agent.port, 'tasks/list', {})).body.result?.tasks ?? []).toEqual([])
    expect((await rpc(agent.port, 'message/send', userText('chat small'))).body.result.status.state).toBe(
      'input-required',
    )
  })
})

describe('maxRunningBytes: the running tasks together', () => {
  it('24 concurrent sends of 1 MiB against a 16 MiB budget: 16 run, the rest get 429 naming maxRunningBytes; after the running ones finish, new sends run', {
    timeout: 90_000,
  }, async () => {
    agent = await startBudgetsAgent({ A2A_MAX_RUNNING_BYTES: String(16 * MiB) })
    await agent.probe({ gc: true })
    const before = rssOf(agent.pid)!.rss
    const rss = sampleRss(agent.pid)
    // Just under 1 MiB of memory with the message's objects and ids and the agent's progress message.
    const hold = 'hold '.padEnd(MiB - 2048, 'x')
    const sends = await Promise.all(
      Array.from({ length: 24 }, () =>
        rpc(agent!.port, 'message/send', userText(hold, undefined, { blocking: false })),
      ),
    )
    const running = sends.filter((send) => send.body.result?.status.state === 'working')
    const busy = sends.filter((send) => send.status === 429)
    const peak = rss.stop()
    console.log(
      `maxRunningBytes 16 MiB, 24 concurrent sends of 1 MiB held running: ${running.length} run, ${busy.length} got 429; agent RSS ${mib(before)} before, peak ${mib(peak)} (+${mib(peak - before)})`,
    )
    // Each message is just under 1 MiB: 16 fit, reserved before any store I/O, so no concurrent send slips past.
    expect(running).toHaveLength(16)
    expect(busy).toHaveLength(8)
    for (const refused of busy) {
      expect(refused.headers['retry-after']).toBe('1')
      expect(refused.body.error!.message).toMatch(
        /^The server is busy: running tasks hold \d+ bytes and \d+ more would pass maxRunningBytes \(16777216\); retry later$/,
      )
    }
    agent.release()
    const ids = running.map((send) => send.body.result.id as string)
    const states = await pollUntil(
      () => Promise.all(ids.map(async (id) => (await rpc(agent!.port, 'tasks/get', { id })).body.result.status.state)),
      (all) => all.every((state) => state === 'completed'),
      30_000,
    )
    expect(states.every((state) => state === 'completed')).toBe(true)
    // Released when they settled: as many again run now.
    const again = await Promise.all(
      Array.from({ length: 16 }, () =>
        rpc(agent!.port, 'message/send', userText(hold, undefined, { blocking: false })),
      ),
    )
    expect(again.map((send) => send.body.result?.status.state)).toEqual(Array(16).fill('working'))
    agent.release()
    expect((await agent.probe()).logged).toMatchObject({ warn: 0, error: 0 })
  })
})

describe('the budgets at their edges', () => {
  // Completes at once, or, for "hold", waits without a move (so its task holds its message alone) until released.
  let release = () => {}
  const held = new Promise<void>((resolve) => (release = resolve))
  const agentOf = () =>
    defineAgent({
      card: { name: 'Edges', description: 'Completes, or holds', version: '1.0.0' },
      async execute(ctx, task) {
        if (ctx.text.startsWith('hold')) await held
        task.complete()
      },
    })
  const messageOf = (text: string, messageId: string) => ({
    role: 'user',
    messageId,
    parts: [{ kind: 'text', text: text.padEnd(4000, '.') }],
  })
  // The size the runtime gives such a message once it belongs to a task: what both budgets count it as.
  const bytes = userMessageBytes(readSendParams({ message: messageOf('send', 'edge-1') }, 'platform').message)
  const send = async (app: ReturnType<typeof createA2AApp>, text: string, messageId: string) => {
    const body = rpcBody('message/send', { message: messageOf(text, messageId), configuration: { blocking: false } })
    const response = await app.fetch(
      new Request('http://localhost/', { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
    )
    return { status: response.status, body: (await response.json()) as any }
  }
  afterEach(() => release())

  it('maxRunningBytes: a message of exactly the room left beside a running task runs, one byte more is refused with 429', async () => {
    const exact = createA2AApp(agentOf(), { maxTaskBytes: bytes, maxRunningBytes: 2 * bytes })
    expect((await send(exact, 'hold', 'edge-1')).body.result.id).toBeTruthy()
    expect((await send(exact, 'send', 'edge-2')).body.result.id).toBeTruthy()
    const short = createA2AApp(agentOf(), { maxTaskBytes: bytes, maxRunningBytes: 2 * bytes - 1 })
    expect((await send(short, 'hold', 'edge-1')).body.result.id).toBeTruthy()
    const refused = await send(short, 'send', 'edge-2')
    expect(refused.status).toBe(429)
    expect(refused.body.error.message).toBe(
      `The server is busy: running tasks hold ${bytes} bytes and ${bytes} more would pass maxRunningBytes (${2 * bytes - 1}); retry later`,
    )
  })

  it('maxTaskBytes: a first message of exactly the limit is taken, one byte over is refused with -32602 naming it', async () => {
    const exact = await send(
      createA2AApp(agentOf(), { maxTaskBytes: bytes, maxRunningBytes: 16 * MiB }),
      'send',
      'edge-1',
    )
    expect(exact.body.result.id).toBeTruthy()
    const over = await send(
      createA2AApp(agentOf(), { maxTaskBytes: bytes - 1, maxRunningBytes: 16 * MiB }),
      'send',
      'edge-1',
    )
    expect(over.body.error).toEqual({
      code: -32602,
      message: `Invalid params: message: a message of ${bytes} bytes is more than maxTaskBytes (${bytes - 1}), the most one task may hold`,
    })
  })
})

describe('configuration', () => {
  const agentOnly = defineAgent({
    card: { name: 'Budgets', description: 'Configuration only', version: '1.0.0' },
    execute: (_ctx, task) => task.complete(),
  })

  it('refuses a bad maxTaskBytes or maxRunningBytes with a ConfigurationError naming the option, its variable and the value; the option wins over the variable', () => {
    expect(() => createA2AApp(agentOnly, { maxTaskBytes: 0 })).toThrow(ConfigurationError)
    expect(() => createA2AApp(agentOnly, { maxTaskBytes: 0 })).toThrow(
      'maxTaskBytes (A2A_MAX_TASK_BYTES) must be a whole number of bytes, at least 1 (got 0)',
    )
    expect(() => createA2AApp(agentOnly, { maxRunningBytes: 1.5 })).toThrow(
      'maxRunningBytes (A2A_MAX_RUNNING_BYTES) must be a whole number of bytes, at least 8388608 (got 1.5)',
    )
    // Below maxTaskBytes the largest task could never run.
    expect(() => createA2AApp(agentOnly, { maxTaskBytes: 4096, maxRunningBytes: 4095 })).toThrow(
      'maxRunningBytes (A2A_MAX_RUNNING_BYTES) must be a whole number of bytes, at least 4096 (got 4095)',
    )
    process.env.A2A_MAX_TASK_BYTES = '8MiB'
    expect(() => createA2AApp(agentOnly)).toThrow(
      'maxTaskBytes (A2A_MAX_TASK_BYTES) must be a whole number of bytes, at least 1 (got "8MiB")',
    )
    expect(() => createA2AApp(agentOnly, { maxTaskBytes: 4096 })).not.toThrow()
    delete process.env.A2A_MAX_TASK_BYTES
    process.env.A2A_MAX_RUNNING_BYTES = '-1'
    expect(() => createA2AApp(agentOnly)).toThrow(
      'maxRunningBytes (A2A_MAX_RUNNING_BYTES) must be a whole number of bytes, at least 8388608 (got "-1")',
    )
    expect(() => createA2AApp(agentOnly, { maxRunningBytes: 16 * MiB })).not.toThrow()
  })

  it('an agent process started with a bad A2A_MAX_TASK_BYTES exits naming the option and the variable', async () => {
    await expect(startBudgetsAgent({ A2A_MAX_TASK_BYTES: 'lots' })).rejects.toThrow(
      /maxTaskBytes \(A2A_MAX_TASK_BYTES\) must be a whole number of bytes, at least 1 \(got "lots"\)/,
    )
  })
})
