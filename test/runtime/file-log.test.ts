import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Agent, serveAgent, type Task } from 'a2a-runtime'
import { createFileStore } from 'a2a-runtime/file-store'
import { afterEach, describe, expect, it } from 'vitest'
import { rpc } from '../_rpc.ts'
import { agent, deferred } from './_agents.ts'
import { type FixtureAgent, startFixtureAgent } from './_fixture-process.ts'
import { captureLogger } from './_logger.ts'
import { userMessage } from './_messages.ts'
import { breakTheLog, logBytes, logDir, recordsOf, segmentsOf } from './_task-log-files.ts'

// The file store's log: a settle appends what the task gained instead of rewriting the task, and a restart
// folds those records back into the task's snapshot. The byte counts are the agent process's own (`wchar` of
// /proc/<pid>/io: every byte it handed to write(), disk and sockets), less the bytes of the answers it sent.

const KiB = 1024
const MiB = 1024 * KiB

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-file-log-test-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A JSON-RPC call; `bytes`: the answer's body as sent. */
async function call(url: string, method: string, params: unknown): Promise<{ body: any; bytes: number }> {
  const { body, text } = await rpc(url, method, params)
  return { body, bytes: Buffer.byteLength(text) }
}

async function startAgentProcess(dir: string): Promise<FixtureAgent<unknown>> {
  const process = await startFixtureAgent<unknown>('file-store-agent.mjs', { A2A_STORE: `file:${dir}` })
  cleanups.push(() => process.kill())
  return process
}

/** Bytes the process has handed to write() so far. */
function bytesWritten(pid: number): number {
  return Number(/^wchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1])
}

async function serve(agentToServe: Agent, dir: string, options: { segmentBytes?: number } = {}) {
  const logger = captureLogger()
  const store = createFileStore({ dir, logger, ...options })
  const server = await serveAgent(agentToServe, { port: 0, hostname: '127.0.0.1', handleSignals: false, logger, store })
  let closed = false
  const close = async () => {
    if (!closed) await server.close()
    closed = true
  }
  cleanups.push(close)
  const rpc = async (method: string, params: unknown) => (await call(server.url, method, params)).body
  return { store, rpc, close, logger }
}

/** Opens the directory as the next start does, and closes that store after the test. */
function reopen(dir: string) {
  const logger = captureLogger()
  const store = createFileStore({ dir, logger })
  cleanups.push(() => store.close())
  return { store, logger }
}

const asJson = (value: unknown) => JSON.parse(JSON.stringify(value))

/** A conversation that grows one artifact in chunks over several turns, with questions between. */
const storyteller = agent((ctx, task) => {
  const turn = ctx.history.filter((message) => message.role === 'user').length
  if (turn === 1) {
    task.artifact('Once ', { artifactId: 'story', lastChunk: false })
    task.artifact('upon ', { artifactId: 'story', append: true, lastChunk: false })
    task.artifact('a time', { artifactId: 'story', append: true, lastChunk: false })
    return task.inputRequired('Which kingdom?')
  }
  if (turn === 2) {
    task.working('Looking it up')
    task.artifact(` in ${ctx.text.slice(0, 20)}`, { artifactId: 'story', append: true, lastChunk: false })
    task.artifact({ kingdom: ctx.text.slice(0, 20) }, { name: 'facts', metadata: { turn } })
    return task.authRequired('Sign in to hear the rest')
  }
  if (turn === 3) {
    task.artifact(', there lived', { artifactId: 'story', append: true, lastChunk: false })
    return task.inputRequired('Who lived there?')
  }
  task.artifact(` ${ctx.text}. The end.`, { artifactId: 'story', append: true, lastChunk: true })
  task.complete('Told')
})

describe('the file store log (A2A_STORE=file:<dir>)', () => {
  it.skipIf(!existsSync('/proc/self/io'))(
    'writes in proportion to what a conversation adds, not to the size of the task: 28 messages of 256 KiB on one task (7.3 MB) write under 4× those bytes (17.1 MB measured, 2.3×; rewriting the whole task at every settle wrote 107 MB, 14.6×)',
    async () => {
      const dir = tempDir()
      const agentProcess = await startAgentProcess(dir)
      const messages = 28
      const text = (i: number) => `chat ${i} `.padEnd(256 * KiB, 'y')
      // The answers carry no history, so they weigh a few hundred bytes: the count is the store's writes.
      const configuration = { historyLength: 0 }
      const before = bytesWritten(agentProcess.pid)
      let answered = 0
      const first = await call(agentProcess.url, 'message/send', { ...userMessage(text(0)), configuration })
      answered += first.bytes
      const taskId = first.body.result.id
      for (let i = 1; i < messages; i++) {
        const next = await call(agentProcess.url, 'message/send', {
          ...userMessage(text(i), { taskId }),
          configuration,
        })
        expect(next.body.result?.status.state).toBe('input-required')
        answered += next.bytes
      }
      const written = bytesWritten(agentProcess.pid) - before - answered
      const added = messages * 256 * KiB
      expect(written).toBeLessThan(4 * added)
      expect(((await agentProcess.probe()) as any).logged.warn).toBe(0)
    },
    120_000,
  )

  it.skipIf(!existsSync('/proc/self/io'))(
    'writes a message of ~1 MiB answered in 1,000 streamed chunks of 1 KiB in under 4× the bytes of message and answer (4.2 MB for 2.1 MB measured, 2.0×: a snapshot at creation and one as the turn ends, nothing per chunk)',
    async () => {
      const dir = tempDir()
      const agentProcess = await startAgentProcess(dir)
      // As long as a request may be (1 MiB) with its envelope.
      const message = 'stream:1000:1024 '.padEnd(MiB - KiB, 'y')
      const before = bytesWritten(agentProcess.pid)
      const done = await call(agentProcess.url, 'message/send', {
        ...userMessage(message),
        configuration: { historyLength: 0 },
      })
      expect(done.body.result.status.state).toBe('completed')
      // The chunks' text joined, as the task keeps it.
      expect(done.body.result.artifacts[0].parts).toHaveLength(1)
      expect(done.body.result.artifacts[0].parts[0].text).toHaveLength(1000 * KiB)
      const written = bytesWritten(agentProcess.pid) - before - done.bytes
      expect(written).toBeLessThan(4 * (message.length + 1000 * KiB))
      // Nothing per chunk: the snapshot at creation, and the turn written once as it ended.
      expect(recordsOf(dir, done.body.result.id)).toHaveLength(2)
    },
    120_000,
  )

  it('reads a task back from its records equal to what it served before the restart: artifacts appended in chunks, questions and follow-ups, its event log', async () => {
    const dir = tempDir()
    const first = await serve(storyteller, dir)
    // A long first message makes a large snapshot, so the next turns are written as entries.
    const opened = (await first.rpc('message/send', userMessage(`Tell me a story ${'please '.repeat(1200)}`))).result
    expect(opened.status.state).toBe('input-required')
    // A follow-up larger than the snapshot so far: the store writes a new one.
    await first.rpc('message/send', userMessage(`Far ${'far '.repeat(3000)}away`, { taskId: opened.id }))
    const waiting = (await first.rpc('message/send', userMessage('signed in', { taskId: opened.id }))).result
    expect(waiting.status.state).toBe('input-required')
    const records = recordsOf(dir, opened.id)
    expect(records.map((record) => [record.kind, record.n])).toEqual([
      ['snapshot', 1],
      ['entries', 2],
      ['snapshot', 3],
      ['entries', 4],
    ])
    expect(records[2]!.text).toContain('Far far')
    expect(records[3]!.text).toContain('signed in')
    const served = (await first.rpc('tasks/get', { id: opened.id })).result
    const log = asJson(first.store.events(opened.id))
    expect(log.length).toBeGreaterThan(10)
    await first.close()

    const { store, logger } = reopen(dir)
    expect(asJson(store.get(opened.id))).toEqual(asJson(first.store.get(opened.id)))
    expect(asJson(store.events(opened.id))).toEqual(log)
    expect(logger.text('warn')).toBe('')
    await store.close()

    const second = await serve(storyteller, dir)
    expect((await second.rpc('tasks/get', { id: opened.id })).result).toEqual(served)
    const ended = (await second.rpc('message/send', userMessage('a dragon', { taskId: opened.id }))).result
    expect(ended.status.state).toBe('completed')
    expect(ended.artifacts[0].parts.map((part: any) => part.text).join('')).toMatch(
      /^Once upon a time in Far far .*, there lived a dragon\. The end\.$/,
    )
    await second.close()
    // The second process went on numbering the task's records where the first stopped.
    expect(recordsOf(dir, opened.id).at(-1)!.n).toBe(5)
    const third = await serve(storyteller, dir)
    expect((await third.rpc('tasks/get', { id: opened.id })).result).toEqual(ended)
  })

  it('ignores a torn last line (a crash mid-write): the task is read back as confirmed, and the next process writes a segment of its own', async () => {
    const dir = tempDir()
    const first = await serve(storyteller, dir)
    const opened = (await first.rpc('message/send', userMessage(`Tell me a story ${'please '.repeat(1200)}`))).result
    await first.rpc('message/send', userMessage('Farland', { taskId: opened.id }))
    const served = (await first.rpc('tasks/get', { id: opened.id })).result
    await first.close()
    const [segment] = segmentsOf(dir)
    appendFileSync(segment!, `{"t":"${opened.id}","n":4,"entries":[{"event":{"kind":"status-upd`)

    const second = await serve(storyteller, dir)
    expect((await second.rpc('tasks/get', { id: opened.id })).result).toEqual(served)
    const waiting = (await second.rpc('message/send', userMessage('signed in', { taskId: opened.id }))).result
    expect(waiting.status.state).toBe('input-required')
    await second.close()
    expect(second.logger.text('warn')).toBe('')
    expect(segmentsOf(dir)).toHaveLength(2)

    const { store, logger } = reopen(dir)
    expect(asJson(store.get(opened.id))).toEqual(waiting)
    expect(logger.text('warn')).toBe('')
  })

  it('reads a task whose record is damaged back as it was before that record, with warnings naming the line and the task, and goes on with it', async () => {
    const dir = tempDir()
    const first = await serve(storyteller, dir)
    const opened = (await first.rpc('message/send', userMessage(`Tell me a story ${'please '.repeat(1200)}`))).result
    const asked = (await first.rpc('tasks/get', { id: opened.id })).result
    await first.rpc('message/send', userMessage('Farland', { taskId: opened.id }))
    await first.rpc('message/send', userMessage('signed in', { taskId: opened.id }))
    await first.close()
    // Record 3 (the second turn) is damaged in place; record 4 after it is whole.
    const [segment] = segmentsOf(dir)
    const lines = readFileSync(segment!, 'utf8').split('\n')
    const damaged = lines.findIndex((line) => line.startsWith(`{"t":"${opened.id}","n":3,`))
    lines[damaged] = `{"t":"${opened.id}","n":3,"entries":[{"ev\u0000\u0000`
    writeFileSync(segment!, lines.join('\n'))

    const second = await serve(storyteller, dir)
    expect((await second.rpc('tasks/get', { id: opened.id })).result).toEqual(asked)
    const warnings = second.logger.text('warn')
    expect(warnings).toContain(`${segment} is damaged at line ${damaged + 1} (a record of task ${opened.id})`)
    expect(warnings).toContain(
      `task ${opened.id} is read back as it was at its record 2: record 3 of it is missing or damaged`,
    )
    // The task goes on from there, and its next write is a whole snapshot.
    const again = (await second.rpc('message/send', userMessage('Farland', { taskId: opened.id }))).result
    expect(again.status.state).toBe('auth-required')
    expect(recordsOf(dir, opened.id, { skipDamaged: true }).at(-1)).toMatchObject({ kind: 'snapshot', n: 5 })
    await second.close()
    const { store } = reopen(dir)
    expect(asJson(store.get(opened.id))).toEqual(again)
  })

  it('answers a follow-up whose write failed with the error, and writes the whole task at its next settle: a restart reads back what was served', async () => {
    const dir = tempDir()
    // A segment per write, so each write begins one.
    const first = await serve(storyteller, dir, { segmentBytes: 1 })
    const opened = (await first.rpc('message/send', userMessage(`Tell me a story ${'please '.repeat(1200)}`))).result
    const repair = breakTheLog(dir)
    const refused = await first.rpc('message/send', userMessage('Farland', { taskId: opened.id }))
    expect(refused.error).toEqual({ code: -32603, message: 'Internal error' })
    expect(first.logger.text('error')).toMatch(
      new RegExp(`The task store could not save an event of task ${opened.id}`),
    )
    repair()
    const waiting = (await first.rpc('message/send', userMessage('signed in', { taskId: opened.id }))).result
    expect(waiting.status.state).toBe('input-required')
    expect(recordsOf(dir, opened.id).at(-1)!.kind).toBe('snapshot')
    const served = (await first.rpc('tasks/get', { id: opened.id })).result
    await first.close()

    const { store, logger } = reopen(dir)
    expect(asJson(store.get(opened.id))).toEqual(served)
    expect(logger.text('warn')).toBe('')
  })

  it('ends a segment at a write that failed part way (no space left): the write after it begins a new segment, and a restart reads back every task confirmed', async () => {
    const dir = tempDir()
    const first = createFileStore({ dir })
    const newTask = (name: string, text = ''): Task => ({
      kind: 'task',
      id: `${name}-${Math.random()}`,
      contextId: 'ctx',
      status: { state: 'submitted', timestamp: new Date().toISOString() },
      artifacts: [],
      history: text ? [{ kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text }] }] : [],
    })
    const kept = newTask('kept')
    await first.create(kept)
    // The disk fills up: the next write handed to libuv (a batch too large to copy on the main thread) lands 10
    // bytes, then fails.
    const probe = await open(join(dir, 'probe'), 'w')
    const fileHandle = Object.getPrototypeOf(probe) as { writeFile(data: string): Promise<void> }
    await probe.close()
    const writeFile = fileHandle.writeFile
    let failures = 1
    fileHandle.writeFile = async function (this: unknown, data: string) {
      if (failures-- <= 0) return writeFile.call(this, data)
      await writeFile.call(this, data.slice(0, 10))
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
    }
    const lost = newTask('lost', 'x'.repeat(100 * KiB))
    const next = newTask('next')
    try {
      const refused = first.create(lost)
      const queued = first.create(next)
      await expect(refused).rejects.toThrow('no space left')
      await queued
    } finally {
      fileHandle.writeFile = writeFile
    }
    await first.close()
    expect(segmentsOf(dir)).toHaveLength(2)

    // Read back whole (and failed: no process runs them any more), the refused one not at all, nothing damaged.
    const { store, logger } = reopen(dir)
    expect(store.get(kept.id)).toMatchObject({ id: kept.id, status: { state: 'failed' } })
    expect(store.get(next.id)).toMatchObject({ id: next.id, status: { state: 'failed' } })
    expect(store.get(lost.id)).toBeUndefined()
    expect(logger.text('warn')).not.toMatch(/damaged|skipping|missing/)
  })

  it('skips, with a warning naming it, a file in the log that is not a segment, and leaves it', async () => {
    const dir = tempDir()
    const first = await serve(storyteller, dir)
    const opened = (await first.rpc('message/send', userMessage('Tell me a story'))).result
    await first.close()
    const stranger = join(logDir(dir), '000000000099.jsonl')
    writeFileSync(stranger, 'not a segment\n')

    const { store, logger } = reopen(dir)
    expect(store.get(opened.id)?.status.state).toBe('input-required')
    expect(logger.text('warn')).toMatch(`skipping ${stranger}: it is not a segment of this version of the task log`)
    await store.close()
    expect(existsSync(stranger)).toBe(true)
  })

  it('writes a long turn to the log before it settles (progress of 1.5 MiB), and a restart in the middle of it fails the task past the events written', async () => {
    const dir = tempDir()
    const gate = deferred()
    const progress = 'p'.repeat(64 * KiB)
    const worker = agent(async (_ctx, task) => {
      for (let i = 0; i < 24; i++) task.working(`${i} ${progress}`)
      await gate.promise
      task.inputRequired('Done; anything else?')
    })
    const first = await serve(worker, dir)
    cleanups.push(() => gate.resolve())
    const sent = (await first.rpc('message/send', { ...userMessage('work'), configuration: { blocking: false } }))
      .result
    await expect
      .poll(() => recordsOf(dir, sent.id).filter((record) => record.kind === 'entries').length)
      .toBeGreaterThan(0)
    expect(logBytes(dir)).toBeGreaterThan(MiB / 2)

    // The process dies here: the next start reads the turn so far, and fails the task.
    const { store, logger } = reopen(dir)
    const failed = store.get(sent.id)!
    expect(failed.status.state).toBe('failed')
    expect(logger.text('warn')).toMatch(new RegExp(`task ${sent.id} was working when the server stopped`))
    const events = store.events(sent.id)!
    expect(events.at(-2)).toMatchObject({ kind: 'status-update', status: { state: 'working' } })
    expect(events.at(-1)!.seq).toBeGreaterThan(events.at(-2)!.seq)
    await store.close()
  })

  it('survives SIGKILL in the middle of conversations: every answer a client had is there after the restart, nothing read back is damaged', async () => {
    const dir = tempDir()
    const agentProcess = await startAgentProcess(dir)
    // Per task, the history of the last answer its client had.
    const answered = new Map<string, unknown[]>()
    let followUps = 0
    let killed = false
    const conversation = async () => {
      try {
        let task = (await call(agentProcess.url, 'message/send', userMessage(`chat ${'x'.repeat(8 * KiB)}`))).body
          .result
        answered.set(task.id, task.history)
        while (!killed) {
          task = (
            await call(
              agentProcess.url,
              'message/send',
              userMessage(`chat ${'z'.repeat(2 * KiB)}`, { taskId: task.id }),
            )
          ).body.result
          if (task?.status.state !== 'input-required') return
          answered.set(task.id, task.history)
          followUps++
        }
      } catch {
        // The process is gone.
      }
    }
    const conversations = Array.from({ length: 8 }, conversation)
    await expect.poll(() => followUps, { timeout: 60_000 }).toBeGreaterThan(300)
    killed = true
    await agentProcess.kill()
    await Promise.all(conversations)
    // The kill may cut the line being written short: only that one, the log's last, may not be JSON.
    expect(recordsOf(dir, undefined, { cutTail: true }).some((record) => record.kind === 'entries')).toBe(true)

    const { store, logger } = reopen(dir)
    for (const [taskId, history] of answered) {
      const task = store.get(taskId)
      expect(task?.history.slice(0, history.length)).toEqual(history)
      // Waiting for the next message, or failed: the process died in the middle of a turn.
      expect(['input-required', 'failed']).toContain(task?.status.state)
    }
    expect(logger.text('warn')).not.toMatch(/skipping|damaged|missing/)
  }, 120_000)

  it('says so, and reads nothing of it, when the directory holds the task files of an earlier release (<dir>/tasks/)', async () => {
    const dir = tempDir()
    mkdirSync(join(dir, 'tasks'))
    writeFileSync(join(dir, 'tasks', 'some-task.json'), '{"v":2}')
    const { store, logger } = reopen(dir)
    expect(store.size).toBe(0)
    expect(logger.text('warn')).toContain(
      `${join(dir, 'tasks')} holds task files of an earlier release of the store, which this one does not read`,
    )
  })
})
