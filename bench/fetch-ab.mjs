// A/B of two builds of the runtime inside one process: the same echo agent (servers/_echo-agent.mjs) on each build's
// createA2AApp, requests handed to app.fetch (the whole request path but the socket and Node's HTTP parser), in
// short blocks that alternate between the builds, the order swapped every block (A B, B A, A B, …). Each block's CPU
// time (process.cpuUsage: this process, every thread, the collector's included) is paired with the other build's
// block next to it. On a machine other work keeps busy, two servers in separate processes meet that work at
// different moments and their pairs spread by ±15%; here a busy moment falls on both builds within milliseconds,
// so costs of 1–2% come out of a few thousand blocks. What it does not see: node:http, and what a build does
// differently on Node's parsed headers (app.fetch gets a standard Request).
//
// node bench/fetch-ab.mjs <A runtime/dist/index.js> [<B runtime/dist/index.js>] [--blocks 1500] [--requests 100]
//   [--concurrency 16] [--only <name part>]…
// Workloads (the platform's JSON-RPC): message/send, message/stream (read to the end), GetTask (tasks/get of one task
// created before the blocks), each with `concurrency` requests in flight; every answer's body is checked.
import { parseArgs } from 'node:util'
import { buildsToCompare } from './_builds.mjs'
import { geomeanInterval, median } from './_stats.mjs'
import { echoDefinition, silentLogger } from './servers/_echo-agent.mjs'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    blocks: { type: 'string', default: '1500' },
    requests: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '16' },
    only: { type: 'string', multiple: true },
  },
})
const entries = buildsToCompare(
  positionals,
  'usage: node bench/fetch-ab.mjs <A runtime/dist/index.js> [<B runtime/dist/index.js>] [--blocks 1500] [--requests 100] [--concurrency 16] [--only <name part>]',
)
const blocks = Number(values.blocks)
const perBlock = Number(values.requests)
const concurrency = Number(values.concurrency)

const rpc = (method, params) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
const message = { kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] }
const echoed = (body) => body.includes('"Echo: hi"') && body.includes('"state":"completed"')
const post = (body) => () =>
  new Request('http://127.0.0.1/', { method: 'POST', headers: { 'content-type': 'application/json' }, body })

/** Each build's app: the two are separate module graphs (h3 and the other dependencies are shared). */
const apps = {}
for (const [name, entry] of Object.entries(entries)) {
  const { createA2AApp, defineAgent } = await import(entry)
  apps[name] = createA2AApp(defineAgent(echoDefinition), { logger: silentLogger })
}

async function taskOf(app) {
  const answer = await (await app.fetch(post(rpc('message/send', { message }))())).json()
  if (!answer.result?.id) throw new Error(`GetTask: the task to read was not created: ${JSON.stringify(answer)}`)
  return answer.result.id
}

const allWorkloads = [
  { name: 'message/send', request: () => post(rpc('message/send', { message })), check: echoed },
  {
    name: 'message/stream',
    request: () => post(rpc('message/stream', { message })),
    check: (body) => echoed(body) && body.includes('"final":true'),
  },
  {
    name: 'GetTask',
    // The task is created before the blocks: it stays the newest, so retention keeps it.
    request: async (app) => post(rpc('tasks/get', { id: await taskOf(app) })),
    check: echoed,
  },
]
const workloads = values.only
  ? allWorkloads.filter((workload) => values.only.some((part) => workload.name.includes(part)))
  : allWorkloads

/** `count` requests, `concurrency` at a time; a wrong answer ends the run. */
async function drive(app, makeRequest, check, count) {
  let next = 0
  const worker = async () => {
    while (next++ < count) {
      const response = await app.fetch(makeRequest())
      const body = await response.text()
      if (response.status !== 200 || !check(body)) throw new Error(`HTTP ${response.status}: ${body.slice(0, 300)}`)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}

const cpuMicros = () => {
  const { user, system } = process.cpuUsage()
  return user + system
}
const geomean = (list) => Math.exp(list.reduce((sum, value) => sum + Math.log(value), 0) / list.length)

console.log(
  `A ${entries.A}\nB ${entries.B}\n${blocks} blocks of ${perBlock} requests per build, ${concurrency} at a time\n`,
)
for (const workload of workloads) {
  const requests = {}
  for (const name of ['A', 'B']) {
    requests[name] = await workload.request(apps[name])
    // Not counted: the JIT warms, and the store fills to its retention limit (10,000 tasks), where it then stays.
    await drive(apps[name], requests[name], workload.check, 12_000)
  }
  const cost = { A: [], B: [] }
  for (let block = 0; block < blocks; block++) {
    for (const name of block % 2 ? ['B', 'A'] : ['A', 'B']) {
      const before = cpuMicros()
      await drive(apps[name], requests[name], workload.check, perBlock)
      cost[name].push((cpuMicros() - before) / perBlock)
    }
  }
  const ratios = cost.B.map((b, i) => b / cost.A[i])
  const [low, high] = geomeanInterval(ratios)
  console.log(
    `${workload.name}: CPU µs per request A ${median(cost.A).toFixed(2)}, B ${median(cost.B).toFixed(2)} (medians); ` +
      `B/A geometric mean ${geomean(ratios).toFixed(4)} (95% interval ${low.toFixed(4)}–${high.toFixed(4)}), ` +
      `median ${median(ratios).toFixed(4)}; B−A median ${median(cost.B.map((b, i) => b - cost.A[i])).toFixed(2)} µs`,
  )
}
