// The memory store's cost per task apart from HTTP: two builds of `stores/memory.js` each take tasks the way
// message/send on the echo agent gives them (create, working, one artifact, completed) until retention is busy
// evicting, then 200,000 more are timed; each measure in a fresh process (a heap left by the other build would
// weigh on it), in rounds alternating the builds. Run on an idle core (taskset -c 1).
//
//   node bench/store-ab.mjs <A runtime/dist/index.js> [<B>] [--rounds 4]
import { execFileSync } from 'node:child_process'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '4' } },
})
if (positionals.length < 1) {
  console.error('usage: node bench/store-ab.mjs <A runtime/dist/index.js> [<B>] [--rounds 4]')
  process.exit(2)
}
const paths = {
  A: resolve(positionals[0]),
  B: resolve(positionals[1] ?? new URL('../runtime/dist/index.js', import.meta.url).pathname),
}

let made = 0
function newTask() {
  const id = `task-${(made++).toString(36).padStart(30, '0')}`
  const message = {
    kind: 'message',
    role: 'user',
    messageId: 'm1',
    parts: [{ kind: 'text', text: 'hi' }],
    taskId: id,
    contextId: `ctx-${id}`,
  }
  return {
    kind: 'task',
    id,
    contextId: `ctx-${id}`,
    status: { state: 'submitted', timestamp: '2026-11-24T20:00:00.000Z' },
    artifacts: [],
    history: [message],
  }
}

function feed(store, count) {
  for (let i = 0; i < count; i++) {
    const task = newTask()
    store.create(task)
    task.status = { state: 'working', timestamp: '2026-11-24T20:00:00.001Z' }
    store.append(task, {
      kind: 'status-update',
      seq: 1,
      taskId: task.id,
      contextId: task.contextId,
      status: task.status,
      final: false,
    })
    const artifact = { artifactId: `a${i}`, parts: [{ kind: 'text', text: 'Echo: hi' }], lastChunk: true }
    task.artifacts = [artifact]
    store.append(task, {
      kind: 'artifact-update',
      seq: 2,
      taskId: task.id,
      contextId: task.contextId,
      artifact,
      append: false,
      lastChunk: true,
    })
    task.status = { state: 'completed', timestamp: '2026-11-24T20:00:00.002Z' }
    store.append(task, {
      kind: 'status-update',
      seq: 3,
      taskId: task.id,
      contextId: task.contextId,
      status: task.status,
      final: true,
    })
  }
}

if (process.env.STORE_AB_MEASURE) {
  // A child: one build, one measure, its nanoseconds per task on stdout.
  const store = (await import(process.env.STORE_AB_MEASURE)).createMemoryStore()
  feed(store, 30_000)
  const started = performance.now()
  feed(store, 200_000)
  console.log(((performance.now() - started) * 1e6) / 200_000)
  store.close()
} else {
  console.log(`A ${paths.A}\nB ${paths.B}`)
  const measure = (path) =>
    Number(
      execFileSync(process.execPath, [fileURLToPath(import.meta.url), path], {
        env: { ...process.env, STORE_AB_MEASURE: path },
      }),
    )
  const ratios = []
  for (let round = 0; round < Number(values.rounds); round++) {
    const ns = {}
    for (const name of round % 2 ? ['B', 'A'] : ['A', 'B']) ns[name] = measure(paths[name])
    ratios.push(ns.B / ns.A)
    console.log(
      `round ${round + 1}: A ${ns.A.toFixed(0)} ns, B ${ns.B.toFixed(0)} ns per task (create and three events), B/A ${(ns.B / ns.A).toFixed(2)}`,
    )
  }
  console.log(`B/A median ${[...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)].toFixed(2)}`)
}
