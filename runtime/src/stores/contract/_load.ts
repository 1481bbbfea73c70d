import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { assertSameTask } from './_same.js'
import { ScriptedTask, StatusClock, text } from './_scripted-task.js'
import type { SessionCheck, StoreSession } from './_session.js'

const CONCURRENT_TASKS = 200
const CHUNKS = 500
const CHUNK_CHARS = 1024

/** Checks under load: many tasks at once, and one long stream into one artifact. */
export function loadChecks(): SessionCheck[] {
  return [
    { name: `no task is lost when ${CONCURRENT_TASKS} are created and run concurrently`, check: concurrentTasks },
    {
      name: `an artifact streamed in ${CHUNKS} chunks of 1 KiB reads back whole: text joined in order into one part, until a part of another kind`,
      check: longStream,
    },
  ]
}

async function concurrentTasks({ store }: StoreSession): Promise<void> {
  const clock = new StatusClock()
  const contexts = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
  const runs = await Promise.all(
    Array.from({ length: CONCURRENT_TASKS }, async (_, i) => {
      const run = await ScriptedTask.start(store, clock, {
        contextId: contexts[i % contexts.length]!,
        text: `question ${i}`,
      })
      run.working()
      run.artifact({ parts: [text(`answer ${i}`)] })
      await run.complete()
      return run
    }),
  )
  const page = await store.list({ limit: CONCURRENT_TASKS })
  assert.equal(page.total, CONCURRENT_TASKS, 'list total after creating and running tasks concurrently')
  const listed = page.tasks.map((task) => task.id).sort()
  assert.deepEqual(listed, runs.map((run) => run.id).sort(), 'list of everything does not give every task once')
  const inOneContext = await store.list({ contextId: contexts[0]!, limit: 10 })
  assert.equal(inOneContext.total, CONCURRENT_TASKS / contexts.length, 'list total of one context')
  const read = await Promise.all(runs.map((run) => store.get(run.id)))
  for (const [i, task] of read.entries())
    assertSameTask(task, runs[i]!.task, `task ${i} of ${CONCURRENT_TASKS} run concurrently`)
}

async function longStream({ store }: StoreSession): Promise<void> {
  const run = await ScriptedTask.start(store, new StatusClock())
  run.working()
  const artifactId = randomUUID()
  // As a streaming agent sends it: every chunk says `append`, the first one too; the last one says it is the last.
  for (let i = 0; i < CHUNKS; i++)
    run.artifact({ artifactId, parts: [text(chunkText(i))], append: true, lastChunk: false })
  // A part of another kind, or a text with a media type, is a part of its own; text after it joins anew.
  run.artifact({
    artifactId,
    parts: [{ kind: 'data', data: { step: 1 } }, text('after ')],
    append: true,
    lastChunk: false,
  })
  run.artifact({
    artifactId,
    parts: [text('the data'), { kind: 'text', text: '# notes', mediaType: 'text/markdown' }],
    append: true,
    lastChunk: true,
  })
  await run.complete()
  const task = await store.get(run.id)
  assert.ok(task, 'get after the stream gave undefined')
  assert.equal(task.artifacts.length, 1, 'one artifact')
  const parts = task.artifacts[0]!.parts.map((part) => (part.kind === 'text' ? part.text : part.kind))
  const streamed = Array.from({ length: CHUNKS }, (_, i) => chunkText(i)).join('')
  assert.deepEqual(parts, [streamed, 'data', 'after the data', '# notes'], 'parts of the streamed artifact')
  assert.equal(task.artifacts[0]!.lastChunk, true, 'the artifact ends with its last chunk')
  assertSameTask(task, run.task, 'after a long stream')
}

/** 1 KiB of text that says which chunk it is. */
function chunkText(index: number): string {
  return `chunk ${index} `.padEnd(CHUNK_CHARS, '.')
}
