// A/B of two builds of the runtime on the same echo agent: what a change costs the hot path, apart from the
// machine's drift. Both servers run on CPU 0 and autocannon on CPU 1 (when taskset can pin); each workload runs
// in rounds that take the two servers in turn, alternating the order, and reports the median of the paired
// ratios (B / A): drift shifts both members of a pair alike. On Linux it also reports each server's CPU time per
// request (from /proc), B's over A's: a direct measure of the cost a change adds, whether or not the client
// could keep the server busy.
//
// --together loads both servers at the same time instead, each with half the connections, sharing CPU 0: a
// slow minute of the machine (another tenant, a throttled core) then falls on both alike, and the CPU per
// request of each is compared within the round. It separates costs of a few per cent that the rounds taken in
// turn cannot (their pairs spread by ±25% on a shared machine). On a loaded machine it still favoured one side by
// 4–6% (the same build on both sides read 1.04): compare two builds in both orders (A and B swapped) as well.
//
// Workloads (the platform's JSON-RPC): message/send at c=16 and c=1, message/stream at c=16 (the echo's three SSE
// events, read to the end), GetTask at c=16 (tasks/get of one task the server answered before its rounds), card GETs.
// Every answer's body is checked, not only its status.
//
// --rate <n> offers each server n requests per second (autocannon's overallRate) instead of as many as it answers:
// the CPU per request is then compared at the same load on both. On a machine other work keeps busy, a load
// generator short of CPU feeds the two servers unevenly (one gets fewer requests per wake-up, which costs it more
// per request): a rate well under what the servers answer takes that out.
//
// node bench/ab.mjs <A runtime/dist/index.js> [<B runtime/dist/index.js>] [--rounds 8] [--duration 3] [--only <name
// part>] [--together] [--rate <requests per second>]
//
// B defaults to this clone's build (npm run build first). An older build: `git worktree add /tmp/a <ref>`,
// then `npx tsc -p runtime/tsconfig.build.json` in it with this clone's node_modules linked.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { buildsToCompare } from './_builds.mjs'
import { watchForeignLoad } from './_foreign-load.mjs'
import { freePort, killAll, pinningSupport, pinPrefix, start, waitForCard } from './_processes.mjs'
import { geomeanInterval } from './_stats.mjs'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '8' },
    duration: { type: 'string', default: '3' },
    only: { type: 'string', multiple: true },
    together: { type: 'boolean', default: false },
    rate: { type: 'string' },
  },
})
const entries = buildsToCompare(
  positionals,
  'usage: node bench/ab.mjs <A runtime/dist/index.js> [<B runtime/dist/index.js>] [--rounds 8] [--duration 3] [--only <name part>] [--together] [--rate <requests per second>]',
)
const rounds = Number(values.rounds)
const duration = Number(values.duration)
// Spread into every measured load (not the first warm-up, which fills the store as fast as it can).
const paced = values.rate ? { overallRate: Number(values.rate) } : {}
const pinning = pinningSupport()
// autocannon runs in this process: on CPU 1, every thread, apart from the servers.
if (pinning.pinned) spawnSync(pinning.taskset, ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' })
const server = new URL('./servers/echo-runtime.mjs', import.meta.url).pathname

const rpc = (method, params) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
const message = { kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] }
const post = (body) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body })
// Every answer is checked (a fast error is not throughput): the echoed text, and the task's end.
const echoed = (body) => body.includes('"Echo: hi"') && body.includes('"state":"completed"')
const streamed = (body) => echoed(body) && body.includes('"final":true')

/** GetTask reads one task the server answered before the rounds: it stays the newest, so retention keeps it. */
async function getTaskOptions(url) {
  const answer = await (await fetch(url, post(rpc('message/send', { message })))).json()
  const id = answer.result?.id
  if (!id) throw new Error(`GetTask: the task to read was not created: ${JSON.stringify(answer)}`)
  return { ...post(rpc('tasks/get', { id })), connections: 16, verifyBody: (body) => echoed(body) && body.includes(id) }
}

const allWorkloads = [
  {
    name: 'message/send c=16',
    path: '/',
    options: { ...post(rpc('message/send', { message })), connections: 16, verifyBody: echoed },
  },
  {
    name: 'message/send c=1',
    path: '/',
    options: { ...post(rpc('message/send', { message })), connections: 1, verifyBody: echoed },
  },
  {
    name: 'message/stream c=16',
    path: '/',
    options: { ...post(rpc('message/stream', { message })), connections: 16, verifyBody: streamed },
  },
  { name: 'GetTask c=16', path: '/', prepare: getTaskOptions },
  { name: 'card GET c=16', path: '/.well-known/agent.json', options: { connections: 16 } },
]
// --only "c=16" runs the workloads whose name contains it; --only may be given more than once.
const workloads = values.only
  ? allWorkloads.filter((workload) => values.only.some((part) => workload.name.includes(part)))
  : allWorkloads
if (workloads.length === 0) {
  console.error(
    `no workload is named like ${JSON.stringify(values.only)}: ${allWorkloads.map((workload) => workload.name).join(', ')}`,
  )
  process.exit(2)
}

/** The CPU time a process has used (user and system, every thread), in clock ticks; undefined off Linux. */
function cpuTicks(pid) {
  try {
    // Fields after the command name (which may hold spaces) start at its closing parenthesis: utime, stime are 14, 15.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return undefined
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
// The order alternates, so what one position gains the other loses: the geometric mean of the ratios cancels it.
const interval = (ratios) =>
  `(95% interval ${geomeanInterval(ratios)
    .map((r) => r.toFixed(3))
    .join('–')})`
const geomean = (values) => Math.exp(values.reduce((sum, value) => sum + Math.log(value), 0) / values.length)

/**
 * Both servers under load at once, each with half the workload's connections: CPU per request compared within each
 * round.
 */
async function together(workload, options, urls, pids, rates, cpuPerRequest) {
  const connections = Math.max(1, Math.floor(options.A.connections / 2))
  // Warmed together, as they are measured: the one warmed last must not come to the rounds hotter.
  await Promise.all(
    ['A', 'B'].map((name) =>
      autocannon({ url: urls[name] + workload.path, ...options[name], connections, duration, ...paced }),
    ),
  )
  for (let round = 0; round < rounds; round++) {
    await new Promise((done) => setTimeout(done, 1000))
    // Which load starts first alternates: on a loaded machine the first one started gains a few per cent.
    const order = round % 2 ? ['B', 'A'] : ['A', 'B']
    const before = { A: cpuTicks(pids.A), B: cpuTicks(pids.B) }
    const results = await Promise.all(
      order.map((name) =>
        autocannon({ url: urls[name] + workload.path, ...options[name], connections, duration, ...paced }),
      ),
    )
    for (const [i, name] of order.entries()) {
      const result = results[i]
      refuseFailures(workload, name, result)
      rates[name].push(result.requests.average)
      const after = cpuTicks(pids[name])
      if (before[name] !== undefined && after !== undefined)
        cpuPerRequest[name].push((after - before[name]) / result.requests.total)
    }
  }
}

/** A fast error is not throughput: a refused request, a failed connection or a wrong answer ends the run. */
function refuseFailures(workload, name, result) {
  if (result.non2xx || result.errors || result.mismatches)
    throw new Error(
      `${workload.name} on ${name}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.mismatches} wrong answers`,
    )
}

function report(workload, rates, cpuPerRequest) {
  const ratios = rates.B.map((rate, i) => rate / rates.A[i])
  console.log(
    `${workload.name}${values.together ? ' (together)' : ''}: A ${Math.round(median(rates.A))} req/s, B ${Math.round(median(rates.B))} req/s; B/A paired ${ratios.map((r) => r.toFixed(2)).join(' ')}, median ${median(ratios).toFixed(3)}, geometric mean ${geomean(ratios).toFixed(3)} ${interval(ratios)}`,
  )
  if (cpuPerRequest.B.length === rates.B.length && cpuPerRequest.A.length === rates.A.length) {
    const costs = cpuPerRequest.B.map((cost, i) => cost / cpuPerRequest.A[i])
    console.log(
      `  CPU per request, B/A paired ${costs.map((r) => r.toFixed(2)).join(' ')}, median ${median(costs).toFixed(3)}, geometric mean ${geomean(costs).toFixed(3)} ${interval(costs)}`,
    )
  }
}

// What other processes took meanwhile (a shared machine): printed per workload, since it moves the readings.
const foreign = watchForeignLoad()
const cores = (value) => (Number.isFinite(value) ? value.toFixed(2) : 'n/a')
try {
  const urls = {}
  const pids = {}
  for (const [name, entry] of Object.entries(entries)) {
    const port = await freePort()
    const [command, ...args] = [...pinPrefix(pinning, 0), process.execPath, server]
    const handle = start(command, args, { env: { ...process.env, A2A_RUNTIME_ENTRY: entry, PORT: String(port) }, name })
    urls[name] = `http://127.0.0.1:${port}`
    pids[name] = handle.child.pid
    await waitForCard(handle, `${urls[name]}/.well-known/agent.json`)
  }
  console.log(
    `A ${entries.A}\nB ${entries.B}\n${rounds} rounds of ${duration} s per server${values.rate ? ` at ${values.rate} req/s each` : ''}${pinning.pinned ? ', servers on CPU 0' : ` (not pinned: ${pinning.why})`}\n`,
  )
  for (const workload of workloads) {
    const rates = { A: [], B: [] }
    const cpuPerRequest = { A: [], B: [] }
    foreign.part(workload.name)
    // Not counted: the first seconds warm the JIT and fill the store to its retention limit, where it then stays.
    const options = {}
    for (const name of ['A', 'B']) {
      options[name] = workload.prepare ? await workload.prepare(urls[name]) : workload.options
      await autocannon({ url: urls[name] + workload.path, ...options[name], duration: 2 * duration })
    }
    if (values.together) {
      await together(workload, options, urls, pids, rates, cpuPerRequest)
      report(workload, rates, cpuPerRequest)
      continue
    }
    for (let round = 0; round < rounds; round++) {
      for (const name of round % 2 ? ['B', 'A'] : ['A', 'B']) {
        // The other server's tail (closing connections, a collection) would otherwise run on the same core.
        await new Promise((done) => setTimeout(done, 1000))
        const cpuBefore = cpuTicks(pids[name])
        const result = await autocannon({ url: urls[name] + workload.path, ...options[name], duration, ...paced })
        const cpuAfter = cpuTicks(pids[name])
        refuseFailures(workload, name, result)
        rates[name].push(result.requests.average)
        if (cpuBefore !== undefined && cpuAfter !== undefined)
          cpuPerRequest[name].push((cpuAfter - cpuBefore) / result.requests.total)
      }
    }
    report(workload, rates, cpuPerRequest)
  }
  const load = foreign.stop()
  if (load.supported) {
    const parts = Object.entries(load.parts).filter(([name]) => name !== 'start')
    console.log(
      `\nOther processes' CPU, in cores (mean, peak over 5 s): ${parts.map(([name, part]) => `${name} ${cores(part.meanCores)} (${cores(part.peak5sCores)})`).join('; ')}`,
    )
  }
} finally {
  killAll()
}
