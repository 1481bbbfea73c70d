// `npm run bench` (after a build) / `node bench/run.mjs [--smoke] [--duration <s>] [--project <dir>] [--out <dir>]
// [--no-pin]`
//
// Benchmarks three servers, one at a time on their own core, with the load generator on the other:
//   ours     a project generated from this clone (echo template), served by `a2a start`
//   sdk      the official @a2a-js/sdk 1.x server on Express with an equivalent echo executor
//   ceiling  bare node:http answering the same exchange
// then the binding rows: ours answering A2A v1.0 over JSON-RPC, HTTP+JSON (REST) and gRPC (_bindings.mjs),
// then the runtime rows: an echo agent on each JavaScript runtime beside a raw ceiling on it (_runtimes.mjs), and
// what each framework adapter costs per streamed chunk against a hand-written execute (_adapters.mjs).
// and writes a Markdown report (plus the raw numbers as JSON) to bench/results/, printing it too.
// --smoke: every part of the harness briefly (one round of 1 s per row), report in a temporary directory; exits
// non-zero when a server answers wrongly or any figure is missing.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { bindingProblems, bindingRows } from './_bindings.mjs'
import { backgroundLoad, describeMachine } from './_machine.mjs'
import { pinningSupport, pinPrefix } from './_processes.mjs'
import { prepareProject, repoRoot, startCommand } from './_project.mjs'
import { publishReport, runAndExit, runCleanups, stamp } from './_publish.mjs'
import { evaluateTargets, missingFigures, renderReport } from './_report.mjs'
import { assertRuntimesInstalled, RUNTIMES, runtimeProblems, runtimeRows } from './_runtimes.mjs'
import { launch, verify } from './_server.mjs'
import { startupRounds, startupTargets } from './_startup.mjs'
import { targets } from './_targets.mjs'
import { alternatingRounds, cardRow, memoryRun, sendRow, streamRow } from './_workloads.mjs'

const { values: flags } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    duration: { type: 'string' },
    project: { type: 'string' },
    out: { type: 'string' },
    'no-pin': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (flags.help) {
  console.log(
    `node bench/run.mjs [--smoke] [--duration <seconds per load row>] [--project <cache dir>] [--out <report dir>] [--no-pin]`,
  )
  process.exit(0)
}

// The memory reading in the middle of the memory run comes after this many tasks (the full run: ours' cap).
const OURS_MAX_TASKS = 10_000 // a2a-runtime's memory store default (maxTasks)
// A full run: 5 rows x 3 servers x 3 rounds x 4 s (+ a warm-up in the first round) ≈ 3.5 min, the binding rows
// 2 rows x 3 bindings x 3 rounds x 4 s ≈ 1.3 min, the runtime rows
// 6 runtimes x 2 rows x 2 servers x 3 rounds x 4 s (+ warm-ups, wrangler's starts) ≈ 6 min, memory ≤ 3 x 45 s,
// startup 5 rounds of the 3 servers and of the 9 start-up rows: about 13.5 minutes on a 2-core machine.
const profile = flags.smoke
  ? {
      rounds: 1,
      durationSec: 1,
      warmupSec: 0.3,
      sendConcurrency: [4],
      streamConcurrency: 4,
      cardConcurrency: 4,
      targetConcurrency: 4,
      runtimeConcurrency: 16,
      maxRequests: 500_000,
      memoryTasks: 2_000,
      memoryCheckpoint: 1_000,
      memoryConcurrency: 4,
      memoryBudgetSec: 15,
      startupRuns: 1,
      adapterRounds: 2,
      adapterRequests: 3,
    }
  : {
      rounds: 3,
      durationSec: 4,
      warmupSec: 2,
      sendConcurrency: [1, 16, 64],
      streamConcurrency: 16,
      cardConcurrency: 16,
      targetConcurrency: 16,
      runtimeConcurrency: 16,
      maxRequests: 5_000_000,
      memoryTasks: 100_000,
      memoryCheckpoint: OURS_MAX_TASKS,
      memoryConcurrency: 64,
      memoryBudgetSec: 45,
      startupRuns: 5,
      adapterRounds: 20,
      adapterRequests: 40,
    }
if (flags.duration !== undefined) {
  const seconds = Number(flags.duration)
  if (!(seconds > 0)) throw new Error(`--duration must be a positive number of seconds, got ${flags.duration}`)
  profile.durationSec = seconds
}

const log = (line) => process.stderr.write(`[bench] ${line}\n`)
const began = performance.now()
const { add: afterRun, cleanup } = runCleanups(log)

/** The adapters' rows (_adapters.mjs), measured in a process of their own on the server core. */
function adapterRows(pinning) {
  const script = new URL('./_adapters.mjs', import.meta.url).pathname
  const args = [
    ...pinPrefix(pinning, 0),
    process.execPath,
    script,
    '--json',
    '--rounds',
    String(profile.adapterRounds),
    '--requests',
    String(profile.adapterRequests),
  ]
  const run = spawnSync(args[0], args.slice(1), { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })
  if (run.status !== 0)
    throw new Error(`the adapters' benchmark failed (exit ${run.status}): ${run.stderr.slice(-2000)}`)
  return JSON.parse(run.stdout.trim().split('\n').at(-1))
}

async function main() {
  // Before anything is measured: a missing runtime fails the run, and had better do so in its first second.
  assertRuntimesInstalled()
  const pinning = flags['no-pin'] ? { pinned: false, why: '--no-pin' } : pinningSupport()
  const meta = {
    ...describeMachine(repoRoot),
    pinning: { pinned: pinning.pinned, why: pinning.why },
    smoke: flags.smoke,
    profile,
    oursMaxTasks: OURS_MAX_TASKS,
    runtimes: RUNTIMES.map((runtime) => runtime.name),
  }
  log(pinning.pinned ? 'pinning: servers on CPU 0, load on CPU 1' : `no pinning: ${pinning.why}`)
  meta.backgroundBefore = await backgroundLoad()
  if (meta.backgroundBefore.busy > 0.1)
    log(
      `warning: the machine is already ${Math.round(meta.backgroundBefore.busy * 100)}% busy; the figures will be noisy`,
    )
  const tmp = mkdtempSync(join(tmpdir(), 'a2a-bench-run-'))
  afterRun(() => rmSync(tmp, { recursive: true, force: true }))

  const project = await prepareProject(flags.project, log)
  afterRun(() => project.dispose())
  const ours = startCommand(project.dir)
  targets.ours.command = () => ours
  meta.projectReused = project.reused
  // The bench itself (it polls during startup runs) stays off the server core too.
  if (pinning.pinned) spawnSync(pinning.taskset, ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' })

  const results = {
    meta,
    send: {},
    stream: {},
    card: {},
    memory: {},
    startup: {},
    bindings: {},
    runtimes: {},
    verified: {},
    targets: [],
    problems: [],
  }
  const env = { ours: {}, sdk: {}, ceiling: {} }
  const order = [targets.ours, targets.sdk, targets.ceiling]

  // Throughput and latency: the three servers run side by side (an idle one uses no CPU) and every row is
  // measured in rounds that take the servers in turn, alternating the order (alternatingRounds). A row's figure
  // is the round with the median rate; every round's rate is kept in the JSON.
  const servers = {}
  try {
    for (const target of order) {
      log(`${target.name}: starting (${target.label})`)
      servers[target.name] = await launch(target, { pinning, env: env[target.name] })
      results.verified[target.name] = await verify(target, servers[target.name])
      log(`${target.name}: answers correctly (${results.verified[target.name].eventsPerStream} events per stream)`)
      // The ceiling sends as many stream events as ours, so its stream row is comparable.
      if (target.name === 'ours') env.ceiling.BENCH_STREAM_EVENTS = String(results.verified.ours.eventsPerStream)
    }
    for (const c of profile.sendConcurrency) results.send[c] = {}
    const rows = [
      ...profile.sendConcurrency.map((c) => ({
        label: `message/send c=${c}`,
        rate: 'rps',
        into: results.send[c],
        run: (target, warm) => sendRow(target, servers[target.name], c, { profile, pinning, warm }),
      })),
      {
        label: 'message/stream',
        rate: 'streamsPerSec',
        into: results.stream,
        run: (target, warm) => streamRow(target, servers[target.name], { profile, pinning, warm }),
      },
      {
        label: 'card',
        rate: 'rps',
        into: results.card,
        run: (target, warm) => cardRow(target, servers[target.name], { profile, pinning, warm }),
      },
    ]
    for (const row of rows) {
      Object.assign(row.into, await alternatingRounds(order, profile.rounds, row.rate, row.run))
      log(
        `${row.label}: ${order.map((t) => `${t.name} ${row.into[t.name].rounds.map(Math.round).join('/')}`).join(', ')} /s`,
      )
    }
  } finally {
    for (const server of Object.values(servers)) await server.stop()
  }
  results.bindings = await bindingRows(targets.ours, { profile, pinning, log })
  results.runtimes = await runtimeRows({ profile, pinning, tmp, log })
  log(`adapters: ${profile.adapterRounds} rounds of ${profile.adapterRequests} streams per agent`)
  results.adapters = adapterRows(pinning)

  for (const target of order) {
    log(`${target.name}: memory (${profile.memoryTasks} tasks)`)
    results.memory[target.name] = await memoryRun(target, {
      profile,
      pinning,
      tmp,
      env: env[target.name],
      checkpoint: profile.memoryCheckpoint,
    })
  }
  log(`startup: ${profile.startupRuns} round(s) of ${order.map((target) => target.name).join(', ')}`)
  const startupOrder = order.map((target) => ({ ...target, env: env[target.name] }))
  results.startup = await startupRounds(startupOrder, { rounds: profile.startupRuns, pinning, log })
  log(`startup per runtime: ${profile.startupRuns} round(s)`)
  results.startupRuntimes = await startupRounds(startupTargets(ours), { rounds: profile.startupRuns, pinning, log })

  for (const [workload, rows] of [
    ['stream', results.stream],
    ['card', results.card],
    ...Object.entries(results.send).map(([c, rows]) => [`send c=${c}`, rows]),
  ]) {
    for (const [name, row] of Object.entries(rows))
      if (row.failed) results.problems.push(`${workload} ${name}: ${row.failed}`)
  }
  const events = new Set(Object.values(results.stream).map((row) => row.eventsPerStream))
  if (events.size !== 1) results.problems.push(`events per stream differ between servers: ${[...events].join(', ')}`)
  results.problems.push(...bindingProblems(results.bindings))
  results.problems.push(...runtimeProblems(results.runtimes))
  results.problems.push(...missingFigures(results).map((m) => `missing figure: ${m}`))
  results.targets = evaluateTargets(results)
  meta.backgroundAfter = await backgroundLoad()
  meta.elapsedSec = (performance.now() - began) / 1000

  const report = renderReport(results)
  const outDir =
    flags.out ?? (flags.smoke ? mkdtempSync(join(tmpdir(), 'a2a-bench-smoke-')) : join(repoRoot, 'bench/results'))
  return publishReport(outDir, stamp(new Date()), report, results)
}

await runAndExit(main, cleanup, log)
