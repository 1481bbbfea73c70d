import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Task } from 'a2a-runtime'
import { createFileStore } from 'a2a-runtime/file-store'
import { afterEach, describe, expect, it } from 'vitest'
import { ServerUnavailableError } from '../../runtime/src/errors.ts'
import { rpc } from '../_rpc.ts'
import { badSegments, filesUnder, mountSmallDisk, smallDiskUnavailable } from './_disk-full.ts'
import { type FixtureAgent, startFixtureAgent } from './_fixture-process.ts'
import { captureLogger } from './_logger.ts'
import { userMessage, userMessageV1 } from './_messages.ts'

// The file store on a full disk: a tmpfs of 2 MiB, filled by the store's own tasks until a write fails with
// ENOSPC. Every send then answers HTTP 503 with Retry-After and a message that says the store is full, in every
// dialect; no file is left behind per failed write; once there is room again sends succeed without a restart,
// and after a SIGKILL and a restart every task a client was told of is there, with no empty segment left.

const KiB = 1024
const MiB = 1024 * KiB
const FULL = /^The task store is out of disk space \(ENOSPC: no space left on device\); retry later$/

const unavailable = smallDiskUnavailable()
if (unavailable) console.warn(`file-disk-full.test.ts: the full-disk tests are skipped: ${unavailable}`)

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function smallDisk(bytes: number) {
  const disk = mountSmallDisk(bytes)
  cleanups.push(() => disk.unmount())
  return disk
}

type Dialect = 'platform' | 'v0.3' | 'v1.0'
const DIALECTS: Dialect[] = ['platform', 'v0.3', 'v1.0']

interface Answer {
  status: number
  retryAfter: string | null
  body: any
}

async function call(url: string, method: string, params: unknown, version?: string): Promise<Answer> {
  const answer = await rpc(url, method, params, version ? { version } : {})
  return { status: answer.status, retryAfter: answer.headers.get('retry-after'), body: answer.body }
}

/** A blocking send in `dialect`; `streaming`: its streaming method instead. */
function send(url: string, dialect: Dialect, text: string, streaming = false): Promise<Answer> {
  if (dialect === 'v1.0')
    return call(url, streaming ? 'SendStreamingMessage' : 'SendMessage', userMessageV1(text), '1.0')
  return call(
    url,
    streaming ? 'message/stream' : 'message/send',
    userMessage(text),
    dialect === 'v0.3' ? '0.3' : undefined,
  )
}

/** The id of the task a send answered with, when it answered one that completed. */
function completedTask(dialect: Dialect, answer: Answer): string | undefined {
  const task = dialect === 'v1.0' ? answer.body.result?.task : answer.body.result
  const done = dialect === 'v1.0' ? 'TASK_STATE_COMPLETED' : 'completed'
  return answer.status === 200 && task?.status?.state === done ? task.id : undefined
}

async function startAgent(
  storeDir: string,
): Promise<FixtureAgent<{ logged: { warn: number; error: number; last: string[] } }>> {
  const agent = await startFixtureAgent<{ logged: { warn: number; error: number; last: string[] } }>(
    'file-store-agent.mjs',
    {
      A2A_STORE: `file:${storeDir}`,
      // Several segments on the small disk, so one is begun while it is full too.
      A2A_STORE_SEGMENT_BYTES: String(256 * KiB),
    },
  )
  cleanups.push(() => agent.kill())
  return agent
}

describe.skipIf(unavailable !== undefined)('the file store on a full disk (a 2 MiB tmpfs)', () => {
  it('answers 503 with Retry-After and "out of disk space" in every dialect, leaves no file per failed write, and recovers once there is room', async () => {
    const disk = smallDisk(2 * MiB)
    const storeDir = join(disk.dir, 'store')
    // Beside the store: deleting it is the room made later.
    const filler = join(disk.dir, 'filler')
    writeFileSync(filler, Buffer.alloc(MiB, 'f'))
    let agent = await startAgent(storeDir)
    const big = (n: number) => `${n} ${'x'.repeat(48 * KiB)}`

    // Fill: sends of 48 KiB messages until the first 503.
    const acknowledged: string[] = []
    let first: Answer | undefined
    for (let n = 0; n < 200 && !first; n++) {
      const answer = await send(agent.url, 'platform', big(n))
      const id = completedTask('platform', answer)
      if (id) acknowledged.push(id)
      else first = answer
    }
    expect(first, 'a send answered 503 before 200 sends').toBeDefined()
    expect(first!.status).toBe(503)
    expect(first!.retryAfter).toBe('1')
    expect(first!.body.error).toMatchObject({ code: -32603, message: expect.stringMatching(FULL) })
    const filledWith = acknowledged.length

    // Every later send: 503, in each dialect, blocking and streaming; the files in the store stay as many.
    const filesAtFirst = filesUnder(storeDir)
    const refusals = 30
    for (let n = 0; n < refusals; n++) {
      const dialect = DIALECTS[n % DIALECTS.length]!
      const streaming = n % 5 === 4
      const answer = await send(agent.url, dialect, big(1000 + n), streaming)
      expect({ dialect, streaming, status: answer.status, retryAfter: answer.retryAfter }).toEqual({
        dialect,
        streaming,
        status: 503,
        retryAfter: '1',
      })
      expect(answer.body.error.message).toMatch(FULL)
      expect(answer.body.error.code).toBe(-32603)
    }
    const filesAfter = filesUnder(storeDir)
    console.log(
      `file-disk-full: ${filledWith} sends acknowledged before the first 503; files in the store: ${filesAtFirst.length} at the first 503, ${filesAfter.length} after ${refusals} more (${filesAfter.join(', ')})`,
    )
    expect(filesAfter.length).toBeLessThanOrEqual(filesAtFirst.length + 1)
    expect(badSegments(storeDir).torn).toEqual([])
    const { logged } = await agent.probe()
    expect(logged.last.join('\n')).toMatch(
      /Task store: cannot write to .*ENOSPC.*answer HTTP 503 until there is room again/,
    )

    // Room again (the filler goes): sends succeed, with no restart.
    rmSync(filler)
    let n = 2000
    const recovered = async () => {
      const id = completedTask('platform', await send(agent.url, 'platform', big(n++)))
      if (id) acknowledged.push(id)
      return id !== undefined
    }
    await expect.poll(recovered).toBe(true)
    for (let n = 0; n < 6; n++) {
      const dialect = DIALECTS[n % DIALECTS.length]!
      const answer = await send(agent.url, dialect, big(3000 + n))
      const id = completedTask(dialect, answer)
      expect(id, `${dialect} send after room was made: ${JSON.stringify(answer.body).slice(0, 300)}`).toBeDefined()
      acknowledged.push(id!)
    }
    expect((await agent.probe()).logged.last.join('\n')).toMatch(/Task store: writing to .* again/)

    // SIGKILL, restart: every acknowledged task is there, and no segment is empty.
    await agent.kill()
    agent = await startAgent(storeDir)
    for (const id of acknowledged) {
      const got = await call(agent.url, 'tasks/get', { id })
      expect({ id, state: got.body.result?.status?.state }).toEqual({ id, state: 'completed' })
    }
    const completed = await call(agent.url, 'ListTasks', { status: 'TASK_STATE_COMPLETED', pageSize: 1 }, '1.0')
    const all = await call(agent.url, 'ListTasks', { pageSize: 1 }, '1.0')
    const filesAtRestart = filesUnder(storeDir)
    console.log(
      `file-disk-full: after the restart ${acknowledged.length} acknowledged tasks read back; the store holds ${completed.body.result.totalSize} completed of ${all.body.result.totalSize} tasks; files: ${filesAtRestart.join(', ')}`,
    )
    // Only the first 503 may have been a settle that failed after its task was saved: that one is failed now.
    expect(completed.body.result.totalSize).toBe(acknowledged.length)
    expect(all.body.result.totalSize - acknowledged.length).toBeLessThanOrEqual(1)
    expect(badSegments(storeDir)).toEqual({ empty: [], torn: [] })
    expect((await agent.probe()).logged.warn).toBeLessThanOrEqual(2)
  }, 180_000)

  it('store level: a create that does not fit is refused with a 503 error and taken back from the segment; room again, the next fits', async () => {
    const disk = smallDisk(512 * KiB)
    const storeDir = join(disk.dir, 'store')
    const logger = captureLogger()
    const store = createFileStore({ dir: storeDir, logger, segmentBytes: 128 * KiB })
    let closed = false
    cleanups.push(() => (closed ? undefined : store.close()))
    const task = (n: number): Task => ({
      kind: 'task',
      id: `task-${n}`,
      contextId: 'ctx',
      status: { state: 'submitted', timestamp: new Date().toISOString() },
      artifacts: [],
      history: [
        { kind: 'message', role: 'user', messageId: `m-${n}`, parts: [{ kind: 'text', text: 'y'.repeat(20 * KiB) }] },
      ],
    })
    const saved: string[] = []
    let refused: unknown
    for (let n = 0; n < 100 && !refused; n++) {
      await store.create(task(n)).then(
        () => saved.push(`task-${n}`),
        (error: unknown) => (refused = error),
      )
    }
    expect(refused).toBeInstanceOf(ServerUnavailableError)
    expect(refused).toMatchObject({ httpStatus: 503, message: expect.stringMatching(FULL) })
    const files = filesUnder(storeDir)
    for (let n = 100; n < 120; n++) await expect(store.create(task(n))).rejects.toThrow(FULL)
    const filesAfter = filesUnder(storeDir)
    console.log(
      `file-disk-full (store level): ${saved.length} creates of 20 KiB saved before the first refusal; files: ${files.length} then, ${filesAfter.length} after 20 more refusals`,
    )
    expect(filesAfter.length).toBeLessThanOrEqual(files.length + 1)
    // Nothing of a refused create is in the log: every segment ends with a whole line.
    expect(badSegments(storeDir).torn).toEqual([])
    expect(store.get('task-100')).toBeUndefined()
    expect(logger.text('warn')).toMatch(/cannot write to .*ENOSPC/)

    disk.resize(4 * MiB)
    await store.create(task(200))
    saved.push('task-200')
    expect(logger.text('warn')).toMatch(/writing to .* again/)
    await store.close()
    closed = true

    const again = createFileStore({ dir: storeDir, logger })
    cleanups.push(() => again.close())
    expect(saved.filter((id) => again.get(id) === undefined)).toEqual([])
    expect(again.size).toBe(saved.length)
    expect(badSegments(storeDir)).toEqual({ empty: [], torn: [] })
  }, 60_000)
})

describe('the file store at start', () => {
  it('deletes the segments that hold nothing (empty, header only, a line cut short) and reads the others', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2a-file-empty-segments-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const store = createFileStore({ dir })
    await store.create({
      kind: 'task',
      id: 'kept',
      contextId: 'ctx',
      status: { state: 'completed', timestamp: new Date().toISOString() },
      artifacts: [],
      history: [],
    })
    await store.close()
    const log = join(dir, 'log')
    const [segment] = readdirSync(log)
    const header = '{"log":"a2a-tasks","version":1}\n'
    // What a process of an earlier release left after failed writes, numbered before and after the live one.
    mkdirSync(log, { recursive: true })
    writeFileSync(join(log, '000000000000.jsonl'), header)
    writeFileSync(join(log, '000000000100.jsonl'), '')
    writeFileSync(join(log, '000000000101.jsonl'), header)
    writeFileSync(join(log, '000000000102.jsonl'), header.slice(0, 10))
    writeFileSync(join(log, '000000000103.jsonl'), `${header}{"t":"lost","n":1,"snap`)
    writeFileSync(
      join(log, '000000000104.jsonl'),
      `${header}{"t":"lost too","n":1,"snapshot":"${'z'.repeat(200 * KiB)}`,
    )

    const logger = captureLogger()
    const again = createFileStore({ dir, logger })
    cleanups.push(() => again.close())
    expect(readdirSync(log)).toEqual([segment])
    expect(again.get('kept')?.status.state).toBe('completed')
    expect(logger.text('warn')).toBe('')
  })
})
