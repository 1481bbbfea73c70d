import { createRedisStore } from 'a2a-runtime/redis-store'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ScriptedTask, StatusClock, text } from '../../runtime/src/stores/contract/_scripted-task.ts'
import type { RedisTaskStore } from '../../runtime/src/stores/redis/store.ts'
import { type RedisServer, startRedis } from './_redis.ts'

/**
 * A task's status in Redis moves only with the event that moves it, in the same script, however its writes are
 * retried. The run hands each event to the store at once, without waiting for the one before, and moves on: a
 * write that failed (Redis unreachable a moment) is retried after the task has gone further, even ended. The
 * retry must write the task as of its own event, never as the run holds it now: a task ended in Redis without its
 * final event leaves a client that resumes its stream (Last-Event-ID, SubscribeToTask) waiting for an end that
 * never comes.
 *
 * Redis refuses the writer's scripts for a moment (an ACL that takes EVAL and EVALSHA away from its user): the
 * writes fail as they do while Redis is unreachable, and are retried once it gives them back, in the order the
 * test chose, with no server killed nor a reconnect to wait for.
 */

const USER = 'settle-writer'
const PASSWORD = 'settle-secret'

let redis: RedisServer
let admin: Redis
const cleanups: Array<() => unknown> = []

beforeAll(async () => {
  redis = await startRedis()
  admin = new Redis(redis.url)
  await admin.call('ACL', 'SETUSER', USER, 'on', `>${PASSWORD}`, '~*', '&*', '+@all')
})
afterAll(async () => {
  admin?.disconnect()
  await redis?.stop()
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  await admin.call('ACL', 'SETUSER', USER, 'resetkeys', '~*', '+@all')
})

/** Redis refuses the writer's scripts (every write of the store is one) until `allowScripts`. */
async function refuseScripts(): Promise<void> {
  await admin.call('ACL', 'LOG', 'RESET')
  await admin.call('ACL', 'SETUSER', USER, '-eval', '-evalsha')
}

async function allowScripts(): Promise<void> {
  await admin.call('ACL', 'SETUSER', USER, '+@all')
}

/** How many of the writer's commands Redis has refused since `refuseScripts`. */
async function refused(): Promise<number> {
  const log = (await admin.call('ACL', 'LOG')) as unknown[][]
  let count = 0
  for (const entry of log) {
    const at = entry.indexOf('count')
    if (entry[entry.indexOf('username') + 1] === USER) count += Number(entry[at + 1])
  }
  return count
}

/**
 * Waits until the write refused first has been tried three times: its last retry comes a second later, well after
 * the first retries of the writes handed next (50 ms after theirs, then 250 ms after that).
 */
async function firstWriteTriedThrice(): Promise<void> {
  await expect.poll(refused, { interval: 10 }).toBeGreaterThanOrEqual(3)
}

/**
 * A store that writes as the user the ACL holds back, and one that reads as another instance would (`readerLeaseMs`:
 * how long it waits for a task without a lease before it fails it as lost, and how often it looks).
 */
function stores(readerLeaseMs?: number): { writer: RedisTaskStore; reader: RedisTaskStore; prefix: string } {
  const prefix = `settle-${Math.random().toString(36).slice(2, 10)}:`
  const url = new URL(redis.url)
  url.username = USER
  url.password = PASSWORD
  // A lease renewed every 20 s: no renewal (a script too) is refused among the writes the tests count.
  const writer = createRedisStore({ url: url.href, prefix, timeoutMs: 1000, leaseMs: 60_000 })
  const reader = createRedisStore({
    url: redis.url,
    prefix,
    timeoutMs: 1000,
    ...(readerLeaseMs !== undefined && { leaseMs: readerLeaseMs }),
  })
  cleanups.push(
    () => writer.close(),
    () => reader.close(),
  )
  return { writer, reader, prefix }
}

/**
 * What a client resuming the task's stream gets is what `get` says: the task's log ends with the event of the
 * status `get` answers, final when the task has ended, and holds every event from the first it still has on.
 */
async function expectLogBehindStatus(reader: RedisTaskStore, taskId: string, state: string): Promise<void> {
  const task = (await reader.get(taskId))!
  expect(task.status.state).toBe(state)
  const events = (await reader.events(taskId))!
  expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state } })
  const seqs = events.map((event) => event.seq)
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => seqs[0]! + i))
}

describe('a task ends in Redis with its final event, whatever order its retried writes land in', () => {
  it('an artifact written again after the run completed the task leaves it working in Redis until the completion lands', async () => {
    const { writer, reader } = stores()
    const run = await ScriptedTask.start(writer, new StatusClock())
    run.working()
    await run.flush()

    await refuseScripts()
    run.artifact({ parts: [text('the answer')] })
    // Handed at once, as the run hands it: both writes are being retried when Redis takes them again.
    const completed = run.complete()
    await expect.poll(refused, { interval: 10 }).toBeGreaterThanOrEqual(2)
    await allowScripts()

    await completed
    await expectLogBehindStatus(reader, run.id, 'completed')
    expect((await reader.events(run.id))!.map((event) => event.seq)).toEqual([1, 2, 3])
    expect((await reader.get(run.id))!.artifacts).toHaveLength(1)
  })

  it('an event written whole after the run ended the task (the write before it never landed) ends the task in Redis only with the final event', async () => {
    const { writer, reader } = stores()
    const run = await ScriptedTask.start(writer, new StatusClock())
    run.working()
    await run.flush()

    await refuseScripts()
    run.artifact({ parts: [text('first')] })
    await firstWriteTriedThrice()
    run.artifact({ parts: [text('second')] })
    const completed = run.complete()
    await expect.poll(refused, { interval: 10 }).toBeGreaterThanOrEqual(5)
    await allowScripts()

    // The first artifact, retried last, may find the later events written before it: the run is told so.
    await completed.catch(() => undefined)
    await expectLogBehindStatus(reader, run.id, 'completed')
    expect((await reader.get(run.id))!.artifacts).toHaveLength(2)
  })

  it('a completion that never lands is not what Redis says of the task, though an artifact before it landed late', async () => {
    const { writer, reader, prefix } = stores()
    const run = await ScriptedTask.start(writer, new StatusClock())
    run.working()
    await run.flush()

    await refuseScripts()
    run.artifact({ parts: [text('first')] })
    await firstWriteTriedThrice()
    run.artifact({ parts: [text('second')] })
    const completed = run.complete()
    await expect.poll(refused, { interval: 10 }).toBeGreaterThanOrEqual(5)
    // Scripts on the task's own keys only: its artifacts land, a status (filed in the index too) never does.
    await admin.call('ACL', 'SETUSER', USER, 'resetkeys', `~${prefix}{${run.id}}:*`, '+@all')

    await expect(completed).rejects.toThrow(/no permissions/)
    const task = (await reader.get(run.id))!
    expect(task.status.state).toBe('working')
    const events = (await reader.events(run.id))!
    expect(events.filter((event) => event.kind === 'status-update').at(-1)).toMatchObject({
      status: { state: 'working' },
    })
    expect(events.some((event) => event.kind === 'status-update' && event.final)).toBe(false)
  })

  it('an instance that completes a task another one has failed as lost (its lease ran out) is told so, not that its completion was written', async () => {
    const { writer, reader, prefix } = stores(400)
    const run = await ScriptedTask.start(writer, new StatusClock())
    run.working()
    await run.flush()

    // The writer's lease runs out (a stalled process): the reader's check fails the task with the next number.
    await admin.del(`${prefix}{${run.id}}:lease`)
    await expect
      .poll(async () => (await reader.get(run.id))?.status.state, { timeout: 20_000, interval: 100 })
      .toBe('failed')

    // The completion has that number too: it is not in Redis, and the run must not answer the client that it is.
    await expect(run.complete()).rejects.toThrow(/ended by another instance/)
    await expectLogBehindStatus(reader, run.id, 'failed')
  })
})
