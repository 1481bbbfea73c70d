// What identity costs a request: the same echo agent (servers/echo-runtime.mjs) on one build of the runtime,
// unauthenticated, with listed API keys, and with OpenID Connect JWTs from a local issuer (_oidc-issuer.mjs), for
// `message/send`. Scenarios:
//   none                        no credential; the agent declares no scheme
//   none, another process       the same, served by a second process: what two processes of one build differ by
//   API key (4 listed)          X-API-Key, the last of four named keys (each is compared, whichever matches)
//   JWT RS256, cached           one token, presented again and again: verified once, then the verified-token cache
//   JWT RS256, each token new   a pool of distinct tokens, each presented once per cycle; the pool is larger than
//                               the verified-token cache (1,000 entries, oldest out first), so every request verifies
//                               a signature, as each caller's first request of a token does
//   JWT ES256, each token new   the same with ES256 tokens
// Servers on CPU 0 (one per scheme: none twice, apiKey, oidc), the load and the issuer on CPU 1. Throughput at c=16 in
// rounds that take the scenarios in turn, the order rotating each round, with each server's CPU time per request
// (from /proc) compared with the unauthenticated one's of the same round; then latency at c=1 (one request at a
// time, timed here to the microsecond), in the same rotation. Before any load, each authenticated server must
// refuse a request without a credential and with a wrong one (401), and every answer during it is checked.
//
// node bench/auth.mjs [--runtime <runtime/dist/index.js>] [--rounds 8] [--duration 3] [--latency 1.5]
//   [--tokens 3000] [--smoke]
// --runtime defaults to this clone's build (npm run build first). --smoke: every scenario briefly (about 30 s).
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { watchForeignLoad } from './_foreign-load.mjs'
import { BENCH_AUDIENCE, startBenchIssuer } from './_oidc-issuer.mjs'
import { freePort, killAll, pinningSupport, pinPrefix, start, waitForCard } from './_processes.mjs'
import { geomeanInterval, median, Samples } from './_stats.mjs'

const { values } = parseArgs({
  options: {
    runtime: { type: 'string', default: new URL('../runtime/dist/index.js', import.meta.url).pathname },
    rounds: { type: 'string', default: '8' },
    duration: { type: 'string', default: '3' },
    latency: { type: 'string', default: '1.5' },
    tokens: { type: 'string', default: '3000' },
    smoke: { type: 'boolean', default: false },
  },
})
const rounds = values.smoke ? 1 : Number(values.rounds)
const duration = values.smoke ? 0.5 : Number(values.duration)
const latencySeconds = values.smoke ? 0.3 : Number(values.latency)
// Larger than the verified-token cache plus the requests in flight, so that a token comes back only after it left.
const CACHE_ENTRIES = 1_000
const CONNECTIONS = 16
const tokenCount = values.smoke ? CACHE_ENTRIES + 2 * CONNECTIONS : Number(values.tokens)
if (tokenCount <= CACHE_ENTRIES + CONNECTIONS) {
  console.error(`--tokens must be over ${CACHE_ENTRIES + CONNECTIONS}, or the cache would answer some requests`)
  process.exit(2)
}

const pinning = pinningSupport()
if (pinning.pinned) spawnSync(pinning.taskset, ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' })

const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'message/send',
  params: { message: { kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] } },
})
const answered = (text) => text.includes('"Echo: hi"') && text.includes('"state":"completed"')

/** The CPU time a process has used (user and system, every thread), in microseconds; undefined off Linux. */
function cpuMicros(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10_000 // USER_HZ ticks
  } catch {
    return undefined
  }
}

/** Tokens handed out in turn, round and round. */
function tokenPool(tokens) {
  let next = 0
  return () => tokens[next++ % tokens.length]
}

/** The credential headers of one request of the scenario (a pool's next token each time). */
const headersOf = (scenario) => ({ 'content-type': 'application/json', ...scenario.credential?.() })

/**
 * One request at a time for `seconds`: how many were answered per second and their median latency (ms); each
 * latency goes into `all` as well.
 */
async function sequential(url, scenario, seconds, all = new Samples()) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const latencies = new Samples()
  const started = performance.now()
  const deadline = started + seconds * 1000
  while (performance.now() < deadline) {
    const sent = performance.now()
    const { status, text } = await new Promise((done, fail) => {
      const req = request(url, { method: 'POST', agent, headers: headersOf(scenario) }, (res) => {
        let received = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => {
          received += chunk
        })
        res.once('end', () => done({ status: res.statusCode, text: received }))
        res.once('error', fail)
      })
      req.once('error', fail)
      req.end(body)
    })
    const latency = performance.now() - sent
    latencies.push(latency)
    all.push(latency)
    if (status !== 200 || !answered(text))
      throw new Error(`${scenario.name}, c=1: HTTP ${status}, a wrong answer: ${text.slice(0, 300)}`)
  }
  agent.destroy()
  return { p50: latencies.summary().p50, rate: latencies.length / ((performance.now() - started) / 1000) }
}

/** c=16 for `seconds`, with the server's CPU per request; a refused request or a wrong answer ends the run. */
async function loaded(url, pid, scenario, seconds) {
  const cpuBefore = cpuMicros(pid)
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    verifyBody: answered,
    requests: [
      {
        method: 'POST',
        path: '/',
        body,
        // Called for every request: a pool hands out its next token.
        setupRequest: (req) => ({ ...req, headers: headersOf(scenario) }),
      },
    ],
  })
  const cpuAfter = cpuMicros(pid)
  if (result.non2xx || result.errors || result.mismatches || result.requests.total === 0)
    throw new Error(
      `${scenario.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.mismatches} wrong answers`,
    )
  return {
    // autocannon runs whole seconds at least: its own measure of the time, not the one asked for.
    rate: result.requests.total / result.duration,
    cpuPerRequest: cpuBefore === undefined ? NaN : (cpuAfter - cpuBefore) / result.requests.total,
  }
}

/** The status of one message/send with these headers. */
async function statusOf(url, headers) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  })
  await response.arrayBuffer()
  return response.status
}

const fixed = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a')
const thousands = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a')
const geomean = (list) => Math.exp(list.reduce((sum, value) => sum + Math.log(value), 0) / list.length)
const ratioCell = (list) =>
  list.length && list.every(Number.isFinite)
    ? `${geomean(list).toFixed(3)}x (${geomeanInterval(list)
        .map((r) => r.toFixed(3))
        .join('–')})`
    : 'n/a'

const foreign = watchForeignLoad()
const issuer = await startBenchIssuer()
try {
  const entry = resolve(values.runtime)
  const apiKeys = ['alice', 'bob', 'carol', 'dave'].map((name) => `${name}:${randomBytes(24).toString('base64url')}`)
  const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('A2A_')))
  const serverEnv = {
    none: {},
    // The same agent in a process of its own: how far two processes of one build read apart (the method's floor).
    control: {},
    apiKey: { BENCH_AUTH_SCHEME: 'apiKey', A2A_API_KEY: apiKeys.join(',') },
    oidc: { BENCH_AUTH_SCHEME: 'oidc', A2A_OIDC_ISSUER: issuer.url, A2A_OIDC_AUDIENCE: BENCH_AUDIENCE },
  }
  const servers = {}
  for (const [name, env] of Object.entries(serverEnv)) {
    const port = await freePort()
    const [command, ...args] = [
      ...pinPrefix(pinning, 0),
      process.execPath,
      new URL('./servers/echo-runtime.mjs', import.meta.url).pathname,
    ]
    const handle = start(command, args, {
      env: { ...baseEnv, ...env, A2A_RUNTIME_ENTRY: entry, PORT: String(port) },
      name: `agent (${name})`,
    })
    servers[name] = { url: `http://127.0.0.1:${port}/`, pid: handle.child.pid }
    await waitForCard(handle, `${servers[name].url}.well-known/agent.json`)
  }

  // Auth is on where it should be: without a credential, or with a wrong one, the request is refused.
  const refusals = [
    ['apiKey', {}],
    ['apiKey', { 'x-api-key': 'not-a-listed-key' }],
    ['oidc', {}],
    ['oidc', { authorization: `Bearer ${(await issuer.mint('mallory')).slice(0, -4)}AAAA` }],
  ]
  for (const [server, headers] of refusals) {
    const status = await statusOf(servers[server].url, headers)
    if (status !== 401)
      throw new Error(`the ${server} agent answered ${status}, not 401, to ${JSON.stringify(headers)}`)
  }
  if (await statusOf(servers.none.url, {}).then((status) => status !== 200))
    throw new Error('the unauthenticated agent refused a request')

  // The very first JWT: the agent fetches the issuer's discovery document and keys, then verifies.
  const firstToken = await issuer.mint('first')
  const firstStarted = performance.now()
  const firstStatus = await statusOf(servers.oidc.url, { authorization: `Bearer ${firstToken}` })
  const firstJwtMs = performance.now() - firstStarted
  if (firstStatus !== 200) throw new Error(`the first JWT was answered ${firstStatus}`)

  const mintStarted = performance.now()
  const pool = async (alg) =>
    tokenPool(await Promise.all(Array.from({ length: tokenCount }, (_, i) => issuer.mint(`caller-${i % 50}`, alg))))
  const rsPool = await pool('RS256')
  const esPool = await pool('ES256')
  const mintSeconds = (performance.now() - mintStarted) / 1000
  const cachedToken = await issuer.mint('alice')
  const bearer = (next) => () => ({ authorization: `Bearer ${next()}` })

  const scenarios = [
    { name: 'none', server: 'none' },
    { name: 'none, another process', server: 'control' },
    { name: 'API key (4 listed)', server: 'apiKey', credential: () => ({ 'x-api-key': apiKeys[3].split(':')[1] }) },
    { name: 'JWT RS256, cached', server: 'oidc', credential: bearer(() => cachedToken) },
    { name: 'JWT RS256, each token new', server: 'oidc', credential: bearer(rsPool) },
    { name: 'JWT ES256, each token new', server: 'oidc', credential: bearer(esPool) },
  ]
  for (const scenario of scenarios) {
    Object.assign(scenario, { rates: [], cpu: [], c1Rates: [], latencies: new Samples(), c1Medians: [] })
  }

  foreign.part('warm-up')
  // Not counted: the JIT warms, and the stores fill to their retention limit, where they then stay.
  for (const scenario of scenarios) {
    const { url, pid } = servers[scenario.server]
    await loaded(url, pid, scenario, 2 * duration)
    await sequential(url, scenario, latencySeconds)
  }

  foreign.part('c=16')
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < scenarios.length; i++) {
      const scenario = scenarios[(i + round) % scenarios.length]
      const { url, pid } = servers[scenario.server]
      // The previous run's tail (closing connections, a collection) would otherwise fall into this one.
      await new Promise((done) => setTimeout(done, 1000))
      const { rate, cpuPerRequest } = await loaded(url, pid, scenario, duration)
      scenario.rates.push(rate)
      scenario.cpu.push(cpuPerRequest)
    }
  }
  foreign.part('c=1')
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < scenarios.length; i++) {
      const scenario = scenarios[(i + round) % scenarios.length]
      await new Promise((done) => setTimeout(done, 300))
      const { url } = servers[scenario.server]
      const { p50, rate } = await sequential(url, scenario, latencySeconds, scenario.latencies)
      scenario.c1Rates.push(rate)
      scenario.c1Medians.push(p50)
    }
  }
  const load = foreign.stop()

  const none = scenarios[0]
  const lines = [
    `# Identity on the hot path: message/send`,
    '',
    `Runtime ${entry}; Node ${process.version}; ${rounds} rounds of ${duration} s at c=16, then ${rounds} of ` +
      `${latencySeconds} s at c=1${pinning.pinned ? '; servers on CPU 0, load on CPU 1' : ` (not pinned: ${pinning.why})`}.`,
    `Load average at the end ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}; other processes' CPU (cores, mean and peak over 5 s): ` +
      Object.entries(load.parts)
        .filter(([name]) => name !== 'start')
        .map(([name, part]) => `${name} ${fixed(part.meanCores, 2)} (${fixed(part.peak5sCores, 2)})`)
        .join('; '),
    `The first JWT after start (discovery and keys fetched, then verified): ${fixed(firstJwtMs, 1)} ms; ` +
      `${tokenCount} tokens of each algorithm minted in ${fixed(mintSeconds, 1)} s before the rounds.`,
    '',
    '| scenario | c=16 req/s | vs none | CPU µs/request | CPU vs none (95% interval) | + µs/request | c=1 req/s | c=1 p50 ms | c=1 p99 ms | p50 + µs |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const scenario of scenarios) {
    const rateRatios = scenario.rates.map((rate, i) => rate / none.rates[i])
    const cpuRatios = scenario.cpu.map((cpu, i) => cpu / none.cpu[i])
    const extra = median(scenario.cpu.map((cpu, i) => cpu - none.cpu[i]))
    const p50Extra = median(scenario.c1Medians.map((p50, i) => (p50 - none.c1Medians[i]) * 1000))
    const { p50, p99 } = scenario.latencies.summary()
    const own = scenario === none
    lines.push(
      `| ${scenario.name} | ${thousands(median(scenario.rates))} | ${own ? '' : `${geomean(rateRatios).toFixed(3)}x`} | ` +
        `${fixed(median(scenario.cpu), 1)} | ${own ? '' : ratioCell(cpuRatios)} | ${own ? '' : fixed(extra, 1)} | ` +
        `${thousands(median(scenario.c1Rates))} | ${fixed(p50, 3)} | ${fixed(p99, 3)} | ${own ? '' : fixed(p50Extra)} |`,
    )
  }
  lines.push(
    '',
    'Ratios are geometric means of the rounds paired with none; "+ µs" columns the median of the paired differences.',
  )
  console.log(lines.join('\n'))
} finally {
  killAll()
  await issuer.stop()
}
