import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serveAgent } from 'a2a-runtime'
import { createFileStore } from 'a2a-runtime/file-store'
import { afterEach, describe, expect, it } from 'vitest'
import { rpc } from '../_rpc.ts'
import { agent, deferred, echoAgent } from './_agents.ts'
import { assertRuntimeBuilt, startServeFixture } from './_fixture-process.ts'
import { captureLogger } from './_logger.ts'
import { userMessage } from './_messages.ts'
import { expectOwnTasks, type OwnedTasks } from './_owned-tasks.ts'
import { readEvents } from './_sse.ts'
import { breakTheLog, logBytes, recordsOf, segmentsOf } from './_task-log-files.ts'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-file-store-test-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function serve(agentToServe: Parameters<typeof serveAgent>[0], dir: string) {
  const logger = captureLogger()
  const server = await serveAgent(agentToServe, {
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger,
    store: `file:${dir}`,
  })
  let closed = false
  const close = async () => {
    if (!closed) await server.close()
    closed = true
  }
  cleanups.push(close)
  const call = async (method: string, params: unknown) => (await rpc(server.url, method, params)).body
  return { server, rpc: call, close, logger }
}

/**
 * A process that writes tasks of two owners and one unowned to a file store on STORE_DIR through the built
 * a2a-runtime, as the engine does (create, then each event), leaves Bob's second task running, and says `ready`
 * once the others have settled: the test SIGKILLs it there.
 */
const OWNERS_WRITER = `
import { createFileStore } from 'a2a-runtime/file-store'
const store = createFileStore({ dir: process.env.STORE_DIR })
const at = (ms) => new Date(Date.UTC(2026, 10, 26, 0, 0, 0, ms)).toISOString()
async function run(id, owner, ms, settles) {
  const task = { kind: 'task', id, contextId: 'shared-context', status: { state: 'submitted', timestamp: at(ms) },
    history: [{ kind: 'message', role: 'user', messageId: 'm-' + id, parts: [{ kind: 'text', text: 'Hello' }] }],
    artifacts: [] }
  await store.create(task, owner)
  const move = (seq, state, final) => {
    task.status = { state, timestamp: at(ms + seq) }
    const event = { kind: 'status-update', seq, taskId: id, contextId: task.contextId, status: task.status, final }
    return store.append(task, event)
  }
  move(1, 'working', false)
  if (settles) await move(2, 'completed', true)
}
await run('a-1', 'alice', 10, true)
await run('b-1', 'bob', 20, true)
await run('b-2', 'bob', 30, false)
await run('u-1', undefined, 40, true)
process.stdout.write('ready\\n')
setInterval(() => {}, 60_000)
`

describe('the file store (A2A_STORE=file:<dir>)', () => {
  it('returns a task finished before a restart from tasks/get after it, with its history and artifacts', async () => {
    const dir = tempDir()
    const first = await serve(echoAgent, dir)
    const done = (await first.rpc('message/send', userMessage('remember me'))).result
    expect(done.status.state).toBe('completed')
    await first.close()

    const second = await serve(echoAgent, dir)
    const again = (await second.rpc('tasks/get', { id: done.id })).result
    expect(again).toEqual(done)
  })

  it('resumes, after a restart, a task that was waiting for input', async () => {
    const dir = tempDir()
    const asker = agent((ctx, task) => {
      if (ctx.history.length === 1) return task.inputRequired('Which colour?')
      task.artifact(`You chose ${ctx.text}`)
      task.complete()
    })
    const first = await serve(asker, dir)
    const waiting = (await first.rpc('message/send', userMessage('paint'))).result
    expect(waiting.status.state).toBe('input-required')
    await first.close()

    const second = await serve(asker, dir)
    const answered = (await second.rpc('message/send', userMessage('blue', { taskId: waiting.id }))).result
    expect(answered.status.state).toBe('completed')
    expect(answered.artifacts[0].parts[0].text).toBe('You chose blue')
    expect(answered.history.map((m: any) => m.role)).toEqual(['user', 'agent', 'user'])
  })

  it('fails, at the next start, a task the previous process left running, with the reason', async () => {
    const dir = tempDir()
    const gate = deferred()
    const first = await serve(
      agent(async (_ctx, task) => {
        task.working('on it')
        await gate.promise
      }),
      dir,
    )
    const running = (
      await first.rpc('message/send', { ...userMessage('long job'), configuration: { blocking: false } })
    ).result
    // The process dies without a shutdown: a fresh store on the same directory is the next start.
    const store = createFileStore({ dir, logger: captureLogger() })
    const task = store.get(running.id)!
    expect(task.status.state).toBe('failed')
    expect(task.status.message?.parts[0]).toEqual({ kind: 'text', text: 'The server stopped before the task finished' })
    expect(store.events(running.id)?.at(-1)).toMatchObject({
      kind: 'status-update',
      final: true,
      status: { state: 'failed' },
    })
    await store.close()
    gate.resolve()
  })

  it('numbers the failure of a task the previous process left running past any event it may have sent: a stream resumed from one ends with it', async () => {
    const dir = tempDir()
    const gate = deferred()
    const first = await serve(
      agent(async (_ctx, task) => {
        for (let i = 0; i < 3; i++) task.artifact(`part ${i}`)
        await gate.promise
      }),
      dir,
    )
    const sent = (await first.rpc('message/send', { ...userMessage('go'), configuration: { blocking: false } })).result
    // Events 1-4 went out (working and three parts) but only the created task is on disk: then the process dies.
    const second = await serve(echoAgent, dir)
    const response = await fetch(second.server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', 'Last-Event-ID': '4' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: sent.id } }),
    })
    const { events, ids } = await readEvents(response, 'numbered')
    expect(events).toHaveLength(1)
    expect(ids[0]).toBeGreaterThan(4)
    expect(events[0].result.statusUpdate.status.state).toBe('TASK_STATE_FAILED')
    gate.resolve()
  })

  it('keeps no trace of a task whose creation could not be written: the client gets an error, the store stays empty', async () => {
    const dir = tempDir()
    // A segment per write, so each write begins one.
    const store = createFileStore({ dir, segmentBytes: 1 })
    const server = await serveAgent(echoAgent, {
      port: 0,
      hostname: '127.0.0.1',
      handleSignals: false,
      logger: captureLogger(),
      store,
    })
    cleanups.push(() => server.close())
    const repair = breakTheLog(dir)
    cleanups.push(repair)
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: userMessage('x') }),
    })
    expect(((await response.json()) as any).error.code).toBe(-32603)
    expect(store.size).toBe(0)
  })

  it('answers a blocking send whose final save fails with the error, not "completed", and goes on saving other tasks', async () => {
    const dir = tempDir()
    const started = deferred<string>()
    const gate = deferred()
    cleanups.push(() => gate.resolve())
    const gated = agent(async (ctx, task) => {
      if (ctx.text !== 'held') return task.complete()
      task.working('on it')
      started.resolve(ctx.taskId)
      await gate.promise
      task.artifact('done')
      task.complete()
    })
    const logger = captureLogger()
    const store = createFileStore({ dir, segmentBytes: 1 })
    const server = await serveAgent(gated, { port: 0, hostname: '127.0.0.1', handleSignals: false, logger, store })
    cleanups.push(() => server.close())
    const call = async (method: string, params: unknown) => (await rpc(server.url, method, params)).body
    const answer = call('message/send', userMessage('held'))
    const taskId = await started.promise
    // The disk fails under the running task.
    const repair = breakTheLog(dir)
    gate.resolve()
    const reply = await answer
    expect(reply.result).toBeUndefined()
    expect(reply.error).toEqual({ code: -32603, message: 'Internal error' })
    expect(logger.text('error')).toMatch(new RegExp(`The task store could not save an event of task ${taskId}`))
    // Nothing is stuck: the task ended here (its agent ran to the end), and other tasks are saved as before.
    expect((await call('tasks/get', { id: taskId })).result.status.state).toBe('completed')
    repair()
    const next = (await call('message/send', userMessage('quick'))).result
    expect(next.status.state).toBe('completed')
    // No write is left hanging: the server closes (it waits for the writes in flight).
    await server.close()
    const reopened = createFileStore({ dir })
    cleanups.push(() => reopened.close())
    expect(reopened.get(next.id)?.status.state).toBe('completed')
  })

  it('reads back, after tasks came and went faster than their writes, the tasks retention kept and no other', async () => {
    const dir = tempDir()
    const store = createFileStore({ dir, maxTasks: 1 })
    const server = await serveAgent(echoAgent, {
      port: 0,
      hostname: '127.0.0.1',
      handleSignals: false,
      logger: captureLogger(),
      store,
    })
    cleanups.push(() => server.close())
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        fetch(server.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'message/send', params: userMessage(`t${i}`) }),
        }),
      ),
    )
    const kept = store.list({ limit: 100 }).tasks.map((task) => task.id)
    await server.close()
    const reopened = createFileStore({ dir, maxTasks: 1 })
    cleanups.push(() => reopened.close())
    expect(reopened.list({ limit: 100 }).tasks.map((task) => task.id)).toEqual(kept)
  })

  it('puts the tasks it fails at start after the older settled ones, so their time-to-live still runs out', async () => {
    const dir = tempDir()
    const gate = deferred()
    const first = await serve(
      agent(async (ctx, task) => {
        if (ctx.text === 'wait') await gate.promise
        task.complete()
      }),
      dir,
    )
    const old = (await first.rpc('message/send', userMessage('quick'))).result
    await first.rpc('message/send', { ...userMessage('wait'), configuration: { blocking: false } })
    cleanups.push(() => gate.resolve())
    await new Promise((resolve) => setTimeout(resolve, 200))
    const store = createFileStore({ dir, ttlMs: 60_000, logger: captureLogger() })
    cleanups.push(() => store.close())
    // The old task's hour is up; the one failed at start has 200 ms left.
    store.sweep(Date.parse(old.status.timestamp) + 60_100)
    expect(store.get(old.id)).toBeUndefined()
    expect(store.size).toBe(1)
    gate.resolve()
  })

  it('survives SIGKILL in the middle of a flood of writes: every task answered "completed" is there after, no file is damaged', async () => {
    const dir = tempDir()
    const { child, url } = await startServeFixture({ A2A_STORE: `file:${dir}` })
    cleanups.push(() => child.exitCode === null && child.kill('SIGKILL'))
    const acknowledged: string[] = []
    let killed = false
    const worker = async () => {
      while (!killed) {
        try {
          const response = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: userMessage('x') }),
          })
          const body = (await response.json()) as any
          if (body.result?.status?.state === 'completed') acknowledged.push(body.result.id)
        } catch {
          return // the server is gone
        }
      }
    }
    const workers = Array.from({ length: 8 }, worker)
    await expect.poll(() => acknowledged.length, { timeout: 10_000 }).toBeGreaterThan(200)
    killed = true
    child.kill('SIGKILL')
    await Promise.all(workers)
    await new Promise((resolve) =>
      child.exitCode === null && child.signalCode === null ? child.once('exit', resolve) : resolve(undefined),
    )

    const logger = captureLogger()
    const store = createFileStore({ dir, logger })
    cleanups.push(() => store.close())
    const missing = acknowledged.filter((id) => store.get(id)?.status.state !== 'completed')
    expect(missing).toEqual([])
    expect(logger.text('warn')).not.toMatch(/skipping|damaged|missing/)
  })

  it('keeps the log within twice the bytes a restart reads back, and two segments: 600 tasks (1.7 MB of records) through maxTasks 64 and 16 KiB segments peaked at 274 KB, for 181 KB read back; a task running all along is moved out of the segments deleted, and read back', async () => {
    const dir = tempDir()
    const gate = deferred()
    cleanups.push(() => gate.resolve())
    const asker = agent(async (ctx, task) => {
      if (ctx.text === 'hold') await gate.promise
      task.complete(`Echo: ${ctx.text}`)
    })
    const store = createFileStore({ dir, maxTasks: 64, segmentBytes: 16 * 1024 })
    const server = await serveAgent(asker, {
      port: 0,
      hostname: '127.0.0.1',
      handleSignals: false,
      logger: captureLogger(),
      store,
    })
    cleanups.push(() => server.close())
    const call = async (method: string, params: unknown) => (await rpc(server.url, method, params)).body.result
    const send = (text: string) => call('message/send', userMessage(text))
    const held = await call('message/send', { ...userMessage('hold'), configuration: { blocking: false } })
    const firstSegment = segmentsOf(dir)[0]
    let largest = 0
    let last: any
    for (let i = 0; i < 600; i++) {
      last = await send(`task ${i} ${'x'.repeat(200)}`)
      largest = Math.max(largest, logBytes(dir))
    }
    gate.resolve()
    await expect.poll(async () => (await call('tasks/get', { id: held.id })).status.state).toBe('completed')
    await server.close()
    expect(store.size).toBeLessThanOrEqual(64)
    expect(segmentsOf(dir)).not.toContain(firstSegment)
    // What a restart would read: the records since each kept task's last snapshot. About 1 KiB a task here.
    const reopened = createFileStore({ dir, maxTasks: 64 })
    cleanups.push(() => reopened.close())
    expect(reopened.get(held.id)?.status).toMatchObject({
      state: 'completed',
      message: { parts: [{ text: 'Echo: hold' }] },
    })
    expect(reopened.size).toBe(store.size)
    // What a restart reads back at most: 65 tasks (64 kept, the one held) of the size of the last one's records.
    const perTask = recordsOf(dir, last.id).reduce((sum, record) => sum + Buffer.byteLength(record.text) + 1, 0)
    const live = 65 * perTask
    // Twice that, the segment being written and the one being compacted.
    expect(largest).toBeLessThan(2 * live + 2 * 16 * 1024)
  })

  it('keeps each task with its owner through a SIGKILL of the process that wrote them: each caller sees only its own after the restart, the task left running failed and still its owner’s, and after the next restart too', async () => {
    assertRuntimeBuilt()
    const dir = tempDir()
    const child = spawn(process.execPath, ['--input-type=module', '-e', OWNERS_WRITER], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, STORE_DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    cleanups.push(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'))
    let out = ''
    let err = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
    await expect
      .poll(() => (child.exitCode === null ? out : `exited ${child.exitCode}: ${err}`), { timeout: 30_000 })
      .toBe('ready\n')
    child.kill('SIGKILL')
    await exited

    const tasks: OwnedTasks = { alice: ['a-1'], bob: ['b-1', 'b-2'], unowned: ['u-1'] }
    for (const restart of [1, 2]) {
      const logger = captureLogger()
      const store = createFileStore({ dir, logger })
      await expectOwnTasks(store, tasks)
      expect(store.get('b-2', 'bob')?.status.state, `restart ${restart}`).toBe('failed')
      // The first restart fails the task left running and writes it again; the second reads that back.
      expect(logger.text('warn'), `restart ${restart}`).toMatch(
        restart === 1 ? /^Task store: task b-2 was (submitted|working) when the server stopped; it is failed$/ : /^$/,
      )
      await store.close()
    }
  })
})
