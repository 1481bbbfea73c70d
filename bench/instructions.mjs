// What a change costs the hot path, counted in machine instructions instead of seconds: both builds of the
// runtime serve the same echo agent (servers/echo-runtime.mjs) under valgrind's callgrind, which counts every
// instruction the server process executes whatever else the machine is doing. After a warm-up (the JIT settles,
// the store fills), each window zeroes the counters, sends a fixed number of requests and dumps the count:
// instructions per request, compiler and collector included. Node runs with V8's predictable mode (one thread,
// a fixed collection schedule): otherwise background compilation and collections that follow the clock make
// single windows vary by up to 2x. The two servers run side by side (one core each). Slow: valgrind runs Node
// about 50 times slower, so a run takes minutes.
//
// The store keeps 200 tasks (--max-tasks) rather than its default 10,000: a full collection of 10,000 retained
// tasks costs as much as thousands of requests. Even so, windows of one run still differ by up to 2x (180k-360k
// instructions per message/send: the JIT settling, collections, the runtime's clock caches under valgrind's
// slowness): compare the least windows, over several runs, not single ones.
//
//   node bench/instructions.mjs <A runtime/dist/index.js> [<B runtime/dist/index.js>]
//        [--workload send|card] [--warmup 4000] [--requests 2000] [--windows 3] [--connections 4] [--max-tasks 200]
//
// Needs valgrind (Debian's package: callgrind and callgrind_control).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort, killAll, start, waitForCard } from './_processes.mjs'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    workload: { type: 'string', default: 'send' },
    warmup: { type: 'string', default: '4000' },
    requests: { type: 'string', default: '2000' },
    windows: { type: 'string', default: '3' },
    connections: { type: 'string', default: '4' },
    'max-tasks': { type: 'string', default: '200' },
  },
})
if (positionals.length < 1 || !['send', 'card'].includes(values.workload)) {
  console.error(
    'usage: node bench/instructions.mjs <A runtime/dist/index.js> [<B>] [--workload send|card] [--warmup 4000] [--requests 2000] [--windows 3] [--connections 4]',
  )
  process.exit(2)
}
if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('valgrind is not installed (Debian: apt-get install valgrind)')
  process.exit(2)
}
const builds = {
  A: resolve(positionals[0]),
  B: resolve(positionals[1] ?? new URL('../runtime/dist/index.js', import.meta.url).pathname),
}
const [warmup, requests, windows, connections] = ['warmup', 'requests', 'windows', 'connections'].map((name) =>
  Number(values[name]),
)
const server = new URL('./servers/echo-runtime.mjs', import.meta.url).pathname
const dir = mkdtempSync(join(tmpdir(), 'a2a-instructions-'))
process.on('exit', () => {
  killAll()
  rmSync(dir, { recursive: true, force: true })
})

const sendBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'message/send',
  params: { message: { kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] } },
})
const workload =
  values.workload === 'send'
    ? { method: 'POST', path: '/', body: sendBody, expect: '"completed"' }
    : { method: 'GET', path: '/.well-known/agent-card.json', body: undefined, expect: '"name"' }

/** `count` requests over `connections` keep-alive connections; each answer is checked. */
async function drive(port, count) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  let left = count
  const one = () =>
    new Promise((done, fail) => {
      const headers = workload.body
        ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(workload.body) }
        : {}
      const req = request(
        { host: '127.0.0.1', port, method: workload.method, path: workload.path, agent, headers },
        (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (chunk) => {
            text += chunk
          })
          res.on('end', () =>
            res.statusCode === 200 && text.includes(workload.expect)
              ? done()
              : fail(new Error(`unexpected answer ${res.statusCode}: ${text.slice(0, 300)}`)),
          )
        },
      )
      req.on('error', fail)
      req.end(workload.body)
    })
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (left-- > 0) await one()
      }),
    )
  } finally {
    agent.destroy()
  }
}

function callgrindControl(option, pid) {
  const result = spawnSync('callgrind_control', [option, String(pid)], { encoding: 'utf8' })
  if (result.status !== 0)
    throw new Error(`callgrind_control ${option} ${pid} failed: ${result.stderr || result.stdout}`)
}

/** The instruction total of the newest dump of `label`'s server. */
function lastDumpTotal(label) {
  const dumps = readdirSync(dir)
    .filter((name) => name.startsWith(`${label}.out.`))
    .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()))
  const text = readFileSync(join(dir, dumps.at(-1)), 'utf8')
  const summary = /^summary: (\d+)/m.exec(text)
  if (!summary) throw new Error(`no summary line in ${dumps.at(-1)}`)
  return Number(summary[1])
}

async function measure(label) {
  const port = await freePort()
  const handle = start(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${join(dir, `${label}.out`)}`,
      '--dump-instr=no',
      'node',
      '--predictable',
      '--predictable-gc-schedule',
      server,
    ],
    {
      env: {
        ...process.env,
        A2A_RUNTIME_ENTRY: builds[label],
        PORT: String(port),
        BENCH_MAX_TASKS: values['max-tasks'],
      },
      name: `${label} under callgrind`,
    },
  )
  await waitForCard(handle, `http://127.0.0.1:${port}/.well-known/agent-card.json`, {
    intervalMs: 500,
    timeoutMs: 300_000,
  })
  await drive(port, warmup)
  const perRequest = []
  for (let window = 0; window < windows; window++) {
    callgrindControl('-z', handle.child.pid)
    await drive(port, requests)
    callgrindControl('-d', handle.child.pid)
    perRequest.push(lastDumpTotal(label) / requests)
  }
  await handle.stop()
  return perRequest
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]
// A window with a full collection of the retained tasks in it counts up to twice as many instructions: the
// smallest window is the one with the least collector work, the closest measure of the request path itself.
const least = (list) => Math.min(...list)
const startedAt = performance.now()
const [a, b] = await Promise.all([measure('A'), measure('B')])
const format = (list) => list.map((value) => Math.round(value).toLocaleString('en')).join(', ')
console.log(
  `${values.workload === 'send' ? 'message/send' : 'card GET'}, ${connections} connections, ${warmup} warm-up requests, ${windows} windows of ${requests}`,
)
const summary = (list) =>
  `median ${Math.round(median(list)).toLocaleString('en')}, least ${Math.round(least(list)).toLocaleString('en')}`
console.log(`A ${builds.A}: instructions per request ${format(a)}; ${summary(a)}`)
console.log(`B ${builds.B}: instructions per request ${format(b)}; ${summary(b)}`)
console.log(
  `B/A least ${(least(b) / least(a)).toFixed(3)}, median ${(median(b) / median(a)).toFixed(3)}, in ${Math.round((performance.now() - startedAt) / 1000)} s`,
)
