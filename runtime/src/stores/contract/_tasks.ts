import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { assertEventsKept, assertSameTask, assertSnapshot } from './_same.js'
import { ScriptedTask, StatusClock, text } from './_scripted-task.js'
import type { SessionCheck, StoreSession } from './_session.js'

/** Checks of what `get` gives back: the task as the runtime holds it, through runs, conversations and reopening. */
export function taskChecks(canReopen: boolean): SessionCheck[] {
  const whenReopening = (check: SessionCheck): SessionCheck[] => (canReopen ? [check] : [])
  return [
    { name: 'get returns the task given to create, and undefined for an id never created', check: createThenGet },
    {
      name: 'get returns the task as the runtime holds it after a run: status changes, chunks appended to an artifact, an artifact replaced, a second artifact, completion',
      check: (session) => fullRun(session, false),
    },
    ...whenReopening({
      name: 'get returns the same finished task after the store is opened again',
      check: (session) => fullRun(session, true),
    }),
    {
      name: 'questions and follow-ups join the history in order: user message, question, follow-up, each turn',
      check: (session) => conversation(session, false),
    },
    ...whenReopening({
      name: 'a conversation goes on after the store is opened again while the task waits for input, its events numbered on',
      check: (session) => conversation(session, true),
    }),
    { name: 'a later get reflects what was appended after an earlier get', check: laterGet },
  ]
}

async function createThenGet({ store }: StoreSession): Promise<void> {
  const run = await ScriptedTask.start(store, new StatusClock(), { text: 'What is the weather?' })
  assertSameTask(await store.get(run.id), run.task, 'after create')
  assert.equal(await store.get(randomUUID()), undefined, 'get of an id never created must be undefined')
}

/** A turn that uses every way an agent changes its artifacts. */
async function fullRun(session: StoreSession, reopen: boolean): Promise<void> {
  const run = await ScriptedTask.start(session.store, new StatusClock())
  run.working()
  const streamed = run.artifact({ parts: [text('Once ')], name: 'story', lastChunk: false })
  run.artifact({ artifactId: streamed, parts: [text('upon ')], append: true, lastChunk: false })
  run.artifact({ artifactId: streamed, parts: [text('a time.')], append: true, lastChunk: true })
  // An artifact whose first chunk already says `append` (there is nothing to extend yet): a new artifact.
  const table = run.artifact({
    parts: [{ kind: 'data', data: { rows: 1 } }],
    append: true,
    lastChunk: false,
    metadata: { draft: true },
  })
  run.artifact({ artifactId: table, parts: [{ kind: 'data', data: { rows: 2 } }], description: 'final table' })
  run.artifact({ parts: [{ kind: 'file', file: { name: 'a.txt', mimeType: 'text/plain', bytes: 'aGk=' } }] })
  run.working({ message: 'Checking the result' })
  await run.complete('Done')
  assertSameTask(await session.store.get(run.id), run.task, 'after the run')
  await assertSnapshot(session.store, run.task, run.seq)
  if (!reopen) return
  const store = await session.reopen()
  assertSameTask(await store.get(run.id), run.task, 'after opening the store again')
  await assertEventsKept(store, run.id, run.events, true)
}

/** Two questions (input, then auth) and their answers, each turn ending settled. */
async function conversation(session: StoreSession, reopen: boolean): Promise<void> {
  const run = await ScriptedTask.start(session.store, new StatusClock(), { text: 'Book a table' })
  run.working()
  await run.inputRequired('For how many people?')
  if (reopen) await resumeAfterReopen(session, run)
  await run.followUp('Four')
  run.artifact({ parts: [text('Table for four: found')] })
  await run.authRequired('Sign in to book it')
  if (reopen) await resumeAfterReopen(session, run)
  await run.followUp('Signed in')
  run.artifact({ parts: [text('Booked')] })
  await run.complete()
  const kept = await session.store.get(run.id)
  assertSameTask(kept, run.task, 'after the conversation')
  const said = kept.history.map((message) => [
    message.role,
    message.parts[0]?.kind === 'text' ? message.parts[0].text : undefined,
  ])
  assert.deepEqual(said, [
    ['user', 'Book a table'],
    ['agent', 'For how many people?'],
    ['user', 'Four'],
    ['agent', 'Sign in to book it'],
    ['user', 'Signed in'],
  ])
  await assertSnapshot(session.store, run.task, run.seq)
  if (!reopen) return
  const store = await session.reopen()
  assertSameTask(await store.get(run.id), run.task, 'after the conversation and opening the store again')
}

/**
 * Opens the store again while the task waits for the user, and goes on from what it reads back, as the runtime
 * resumes a task at rest: the task from `get`, the next event numbered after the store's last (`lastSeq`, else
 * the last of `events`).
 */
async function resumeAfterReopen(session: StoreSession, run: ScriptedTask): Promise<void> {
  const store = await session.reopen()
  const task = await store.get(run.id)
  assertSameTask(task, run.task, 'waiting for input, after opening the store again')
  const lastSeq = store.lastSeq ? await store.lastSeq(run.id) : (await store.events(run.id))?.at(-1)?.seq
  assert.equal(
    lastSeq,
    run.seq,
    'after opening the store again, the number of the last event (which numbers the next turn) differs',
  )
  await assertEventsKept(store, run.id, run.events, false)
  run.continueOn(store, task)
}

async function laterGet({ store }: StoreSession): Promise<void> {
  const run = await ScriptedTask.start(store, new StatusClock())
  run.working()
  const answer = run.artifact({ parts: [text('first part')], lastChunk: false })
  await run.flush()
  assertSameTask(await store.get(run.id), run.task, 'while running')
  run.artifact({ artifactId: answer, parts: [text('second part')], append: true })
  await run.complete()
  assertSameTask(await store.get(run.id), run.task, 'a get after later appends')
}
