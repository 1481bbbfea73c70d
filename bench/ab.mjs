// A/B of two builds of the runtime on the same echo agent: what a change costs the hot path, apart from the
// machine's drift. Both servers run on CPU 0 and autocannon on CPU 1 (when taskset can pin); each workload runs
// in rounds that take the two servers in turn, alternating the order, and reports the median of the paired
// ratios (B / A): drift shifts both members of a pair alike.
//
//   node bench/ab.mjs <A runtime/dist/index.js> [<B runtime/dist/index.js>] [--rounds 8] [--duration 3]
//
// B defaults to this clone's build (npm run build first). An older build: `git worktree add /tmp/a <ref>`,
// then `npx tsc -p runtime/tsconfig.build.json` in it with this clone's node_modules linked.
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { freePort, killAll, pinPrefix, pinningSupport, start, waitForCard } from './_processes.mjs'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { rounds: { type: 'string', default: '8' }, duration: { type: 'string', default: '3' } } })
if (positionals.length < 1) {
  console.error('usage: node bench/ab.mjs <A runtime/dist/index.js> [<B runtime/dist/index.js>] [--rounds 8] [--duration 3]')
  process.exit(2)
}
const entries = { A: resolve(positionals[0]), B: resolve(positionals[1] ?? new URL('../runtime/dist/index.js', import.meta.url).pathname) }
const rounds = Number(values.rounds)
const duration = Number(values.duration)
const pinning = pinningSupport()
const server = new URL('./servers/echo-runtime.mjs', import.meta.url).pathname

const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] } } })
const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body }
const workloads = [
  { name: 'message/send c=16', path: '/', options: { ...post, connections: 16 } },
  { name: 'message/send c=1', path: '/', options: { ...post, connections: 1 } },
  { name: 'card GET c=16', path: '/.well-known/agent.json', options: { connections: 16 } },
]

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

try {
  const urls = {}
  for (const [name, entry] of Object.entries(entries)) {
    const port = await freePort()
    const [command, ...args] = [...pinPrefix(pinning, 0), process.execPath, server]
    const handle = start(command, args, { env: { ...process.env, A2A_RUNTIME_ENTRY: entry, PORT: String(port) }, name })
    urls[name] = `http://127.0.0.1:${port}`
    await waitForCard(handle, `${urls[name]}/.well-known/agent.json`)
  }
  console.log(`A ${entries.A}\nB ${entries.B}\n${rounds} rounds of ${duration} s per server${pinning.pinned ? ', servers on CPU 0' : ` (not pinned: ${pinning.why})`}\n`)
  for (const workload of workloads) {
    const rates = { A: [], B: [] }
    for (let round = 0; round < rounds; round++) {
      for (const name of round % 2 ? ['B', 'A'] : ['A', 'B']) {
        const result = await autocannon({ url: urls[name] + workload.path, ...workload.options, duration })
        // A fast error is not throughput.
        if (result.non2xx || result.errors) throw new Error(`${workload.name} on ${name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
        rates[name].push(result.requests.average)
      }
    }
    const ratios = rates.B.map((rate, i) => rate / rates.A[i])
    console.log(`${workload.name}: A ${Math.round(median(rates.A))} req/s, B ${Math.round(median(rates.B))} req/s; B/A paired ${ratios.map((r) => r.toFixed(2)).join(' ')}, median ${median(ratios).toFixed(3)}`)
  }
} finally {
  killAll()
}
