// The runtime rows: `message/send` and `message/stream` at c=16 with the same echo agent on each JavaScript runtime
// a2a-runtime serves on, each beside a raw ceiling on the same runtime, so the ratio says what the runtime's own
// server allows and what the agent takes of it. Measured like the main rows (servers on the server core, the load
// on the load core, every response checked, rounds alternating the order within each pair, the median round);
// one pair runs at a time. The binaries are those of the behaviour suite (test/cross-runtime/): the Node that runs the
// bench, Node 22 and 24, Bun and Deno from test-runtimes/ (the root's postinstall), and workerd under `wrangler dev`.
//
//   runtime   agent                                          ceiling
//   node      servers/echo-runtime.mjs (serveAgent,          servers/ceiling.mjs (node:http)
//             node:http)
//   bun/deno  the same file (serveAgent serves through       servers/ceiling-fetch.mjs (a fetch handler on
//             Bun.serve / Deno.serve there)                  Bun.serve / Deno.serve)
//   workerd   servers/worker-agent.mjs (agentWorker: every   servers/worker-ceiling.mjs (a Worker's fetch
//             request through the agent's Durable Object;     handler; config in servers/worker-ceiling/)
//             config in servers/worker/)
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from './_processes.mjs'
import { repoRoot } from './_project.mjs'
import { launch, verify } from './_server.mjs'
import { platform } from './_targets.mjs'
import { alternatingRounds, sendRow, streamRow } from './_workloads.mjs'

const inRepo = (path) => join(repoRoot, path)
const serversDir = inRepo('bench/servers')
const runtimeEntry = inRepo('runtime/dist/index.js')
const node24 = inRepo('test-runtimes/node_modules/node24/bin/node')
const wranglerDir = inRepo('test-runtimes/node_modules/wrangler')

const benchNode = `node ${process.versions.node.split('.')[0]}`

/**
 * Each runtime: `argv` runs a script on it (for workerd: wrangler, given a Worker's directory instead), `serves`
 * says how its servers are made, `env` is added to theirs.
 */
export const RUNTIMES = [
  // The results are keyed by name: the bench's own Node gets its own even when it is one of the two below.
  {
    name: ['node 22', 'node 24'].includes(benchNode) ? `${benchNode} (bench's)` : benchNode,
    serves: 'node',
    argv: [process.execPath],
  },
  { name: 'node 22', serves: 'node', argv: [inRepo('test-runtimes/node_modules/node22/bin/node')] },
  { name: 'node 24', serves: 'node', argv: [node24] },
  { name: 'bun', serves: 'fetch', argv: [inRepo('node_modules/.bin/bun')] },
  // No update check: the bench makes no request beyond its servers on 127.0.0.1.
  {
    name: 'deno',
    serves: 'fetch',
    argv: [inRepo('test-runtimes/node_modules/.bin/deno'), 'run', '-A'],
    env: { DENO_NO_UPDATE_CHECK: '1' },
  },
  // Wrangler needs Node 22.12 or later: the Node 24 of test-runtimes/, whatever Node runs the bench.
  {
    name: 'workerd',
    serves: 'worker',
    argv: [node24, join(wranglerDir, 'bin/wrangler.js')],
    env: {
      WRANGLER_SEND_METRICS: 'false',
      // No request to workers.cloudflare.com for `request.cf` (a placeholder instead), as above.
      CLOUDFLARE_CF_FETCH_ENABLED: 'false',
      // wrangler dev's own additions to the Worker: a trace collector attached to every request (local
      // observability) and the local resource explorer. Neither runs on Cloudflare; both off for the agent and
      // the ceiling alike.
      X_LOCAL_OBSERVABILITY: 'false',
      X_LOCAL_EXPLORER: 'false',
    },
  },
]

/** Fails, never skips, when a runtime's binary is missing: the rows are of all of them. */
export function assertRuntimesInstalled() {
  for (const runtime of RUNTIMES) {
    // The paths in argv (the binary, wrangler's script); the rest are arguments.
    const missing = runtime.argv.find((part) => part.includes('/') && !existsSync(part))
    if (missing !== undefined) {
      throw new Error(
        `${runtime.name} is not installed (${missing} is missing): run \`npm install\` at the repository root (its postinstall installs test-runtimes/)`,
      )
    }
  }
}

/** What the runtime says it is: `v22.…`, `1.…` for Bun, `2.…` for Deno; workerd's version and wrangler's. */
function versionOf(runtime) {
  if (runtime.serves === 'worker') {
    const version = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version
    return `${version(inRepo('test-runtimes/node_modules/workerd'))}, wrangler ${version(wranglerDir)} dev`
  }
  const { stdout } = spawnSync(runtime.argv[0], ['--version'], {
    encoding: 'utf8',
    env: { ...process.env, ...runtime.env },
  })
  return (
    (stdout ?? '')
      .split('\n')[0]
      .replace(/^deno /, '')
      .replace(/ \(.*$/, '')
      .trim() || 'unknown'
  )
}

/**
 * `wrangler dev` of the Worker configured in `dir` (its wrangler.jsonc) on 127.0.0.1:`port`, its storage in a new
 * directory under `tmp` (removed with it), `vars` as Worker variables. Warnings only: at info it logs every
 * request, work on the server core that is not the Worker's.
 */
async function wranglerDev(runtime, dir, { port, tmp, vars = {} }) {
  const [command, wrangler] = runtime.argv
  const args = [wrangler, 'dev', '--config', join(dir, 'wrangler.jsonc'), '--ip', '127.0.0.1', '--port', String(port)]
  args.push('--inspector-port', String(await freePort()), '--persist-to', mkdtempSync(join(tmp, 'wrangler-state-')))
  args.push('--show-interactive-dev-session=false', '--log-level', 'warn')
  for (const [name, value] of Object.entries(vars)) args.push('--var', `${name}:${value}`)
  return { command, args, cwd: dir }
}

/** The command that runs `file` of bench/servers on `runtime`. */
const serverScript = (runtime, file) => () => ({
  command: runtime.argv[0],
  args: [...runtime.argv.slice(1), join(serversDir, file)],
  cwd: serversDir,
})

// wrangler bundles the Worker and starts workerd before it answers: seconds, more on a busy machine.
const WRANGLER_READY_MS = 90_000

/** The echo agent on `runtime`, in the platform dialect like ours. */
function agentTarget(runtime, tmp) {
  const target = {
    name: `${runtime.name} agent`,
    dialect: platform,
    env: { ...runtime.env, A2A_RUNTIME_ENTRY: runtimeEntry },
  }
  if (runtime.serves !== 'worker')
    return { ...target, label: 'serveAgent', command: serverScript(runtime, 'echo-runtime.mjs') }
  return {
    ...target,
    label: 'agentWorker, its Durable Object',
    command: ({ port }) => wranglerDev(runtime, join(serversDir, 'worker'), { port, tmp }),
    readyTimeoutMs: WRANGLER_READY_MS,
    processGroup: true,
  }
}

/** The raw ceiling on `runtime`, sending `events` events per stream, as many as the agent. */
function ceilingTarget(runtime, tmp, events) {
  const target = {
    name: `${runtime.name} ceiling`,
    dialect: platform,
    env: { ...runtime.env, BENCH_STREAM_EVENTS: String(events) },
  }
  if (runtime.serves === 'node') return { ...target, label: 'node:http', command: serverScript(runtime, 'ceiling.mjs') }
  if (runtime.serves === 'fetch')
    return {
      ...target,
      label: `${runtime.name === 'bun' ? 'Bun' : 'Deno'}.serve`,
      command: serverScript(runtime, 'ceiling-fetch.mjs'),
    }
  return {
    ...target,
    label: "a Worker's fetch handler",
    // A Worker has no process environment: the count goes in as a variable.
    command: ({ port }) =>
      wranglerDev(runtime, join(serversDir, 'worker-ceiling'), { port, tmp, vars: { BENCH_STREAM_EVENTS: events } }),
    readyTimeoutMs: WRANGLER_READY_MS,
    processGroup: true,
  }
}

/**
 * The rows of every runtime, one pair of servers at a time; resolves with { [runtime name]: { version, agent,
 * ceiling (labels), verified, send: { agent, ceiling }, stream: { agent, ceiling } } }, each figure a median round.
 */
export async function runtimeRows({ profile, pinning, tmp, log }) {
  const results = {}
  for (const runtime of RUNTIMES) {
    log(`${runtime.name}: agent and ceiling (send and stream at c=${profile.runtimeConcurrency})`)
    results[runtime.name] = await runtimePair(runtime, { profile, pinning, tmp, log })
  }
  return results
}

async function runtimePair(runtime, { profile, pinning, tmp, log }) {
  const servers = {}
  try {
    const agent = agentTarget(runtime, tmp)
    servers[agent.name] = await launch(agent, { pinning, env: agent.env })
    const verified = { agent: await verify(agent, servers[agent.name]) }
    const ceiling = ceilingTarget(runtime, tmp, verified.agent.eventsPerStream)
    servers[ceiling.name] = await launch(ceiling, { pinning, env: ceiling.env })
    verified.ceiling = await verify(ceiling, servers[ceiling.name])

    const pair = [agent, ceiling]
    const c = profile.runtimeConcurrency
    const send = await alternatingRounds(pair, profile.rounds, 'rps', (target, warm) =>
      sendRow(target, servers[target.name], c, { profile, pinning, warm }),
    )
    const streamProfile = { ...profile, streamConcurrency: c }
    const stream = await alternatingRounds(pair, profile.rounds, 'streamsPerSec', (target, warm) =>
      streamRow(target, servers[target.name], { profile: streamProfile, pinning, warm }),
    )
    const rates = (rows) =>
      pair.map((target) => `${target.name} ${rows[target.name].rounds.map(Math.round).join('/')}`).join(', ')
    log(`${runtime.name}: message/send c=${c}: ${rates(send)} /s; message/stream c=${c}: ${rates(stream)} /s`)
    return {
      version: versionOf(runtime),
      agent: agent.label,
      ceiling: ceiling.label,
      verified,
      send: { agent: send[agent.name], ceiling: send[ceiling.name] },
      stream: { agent: stream[agent.name], ceiling: stream[ceiling.name] },
    }
  } finally {
    for (const server of Object.values(servers)) await server.stop()
  }
}

/** What went wrong in the runtime rows: a row that failed, a ceiling that sent other events than its agent. */
export function runtimeProblems(runtimes) {
  const problems = []
  for (const [name, pair] of Object.entries(runtimes)) {
    for (const row of ['send', 'stream']) {
      for (const server of ['agent', 'ceiling'])
        if (pair[row][server].failed) problems.push(`${name} ${row} ${server}: ${pair[row][server].failed}`)
    }
    const { agent, ceiling } = pair.stream
    if (agent.eventsPerStream !== ceiling.eventsPerStream) {
      problems.push(
        `${name}: events per stream differ between the agent (${agent.eventsPerStream}) and its ceiling (${ceiling.eventsPerStream})`,
      )
    }
  }
  return problems
}
