// How long `a2a dev` takes to start: from spawning it in a project to the first 200 of its Agent Card (GET
// /.well-known/agent.json), for one build of the runtime or two ("before" and "after" a change). Each build gets
// its own temporary project, as test/_support.ts makeAgentProject makes one: src/agent.ts (a small echo agent)
// and node_modules/a2a-runtime linked to that build's runtime directory (whose own dependencies resolve from the
// repository or worktree holding it). Each round starts every build once, in turn, the order alternating from
// round to round (the first start of a round may gain or lose from what ran before it: the alternation makes
// that fall on both builds alike), after a few warm-up rounds that are not counted (the OS file cache, jiti's
// transpile cache).
//
//   node bench/dev-startup.mjs [--before <runtime dir>] [--after <runtime dir>] [--rounds 30] [--json]
//
// --after defaults to this clone's runtime/ (built: `npm run build`). An older build: `git worktree add /tmp/a
// <ref>`, link this clone's node_modules into it, then `../node_modules/.bin/tsc -p tsconfig.build.json` in its
// runtime/. Per build it reports the median and p90; with both, the paired differences after − before (same
// round), their median, their mean with a bootstrap 95% interval, and the geometric mean of the paired ratios
// after/before with its interval. --json prints the same as one JSON object (progress goes to stderr either way).
//
// On Linux it also reads the CPU time (user + system, every thread) the server has used when the card first
// answers, from /proc (in 10 ms ticks): another tenant's load stretches the wall time of a start far more than
// the work the start does (one build against itself on a busy 2-core machine: wall time spread ±156 ms, CPU time
// ±34 ms; on a quiet one both about ±50 ms). The goal is judged on the wall time; the CPU figures say whether a
// wide interval is the machine's noise.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { backgroundLoad } from './_machine.mjs'
import { freePort, killAll, start, waitForCard } from './_processes.mjs'
import { geomeanInterval, median } from './_stats.mjs'

const usage =
  'usage: node bench/dev-startup.mjs [--before <runtime dir>] [--after <runtime dir>] [--rounds 30] [--json]'
let parsed
try {
  parsed = parseArgs({
    options: {
      before: { type: 'string' },
      after: { type: 'string', default: fileURLToPath(new URL('../runtime', import.meta.url)) },
      rounds: { type: 'string', default: '30' },
      json: { type: 'boolean', default: false },
    },
  })
} catch (error) {
  console.error(`${error.message}\n${usage}`)
  process.exit(2)
}
const { values } = parsed
const rounds = Number(values.rounds)
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error(`--rounds must be a positive whole number, not ${JSON.stringify(values.rounds)}\n${usage}`)
  process.exit(2)
}
const WARMUP_ROUNDS = 2
// A loaded machine may take seconds; a start that takes a minute is broken, not slow.
const ROUND_TIMEOUT_MS = 60_000
// SIGTERM, then SIGKILL past this; past STOP_BOUND_MS even SIGKILL has not ended it and the run fails.
const STOP_GRACE_MS = 10_000
const STOP_BOUND_MS = STOP_GRACE_MS + 5_000
const POLL_INTERVAL_MS = 2
// The goal this measures: a change may add at most this much to the start-up.
const GOAL_MS = 20

const builds = [
  ...(values.before === undefined ? [] : [{ name: 'before', dir: resolve(values.before) }]),
  { name: 'after', dir: resolve(values.after) },
]
for (const build of builds) {
  build.bin = join(build.dir, 'bin/a2a.mjs')
  for (const file of [build.bin, join(build.dir, 'dist/cli/main.js')]) {
    if (!existsSync(file)) {
      console.error(
        `--${build.name} ${build.dir}: no ${file} (a runtime directory, built with tsc -p tsconfig.build.json?)`,
      )
      process.exit(2)
    }
  }
}

const agentSource = `import { defineAgent } from 'a2a-runtime'

export default defineAgent({
  card: { name: 'Startup Bench', description: 'Echoes the text it is sent', skills: [{ id: 'echo', name: 'Echo', description: 'Echoes the text', tags: ['bench'], examples: ['hi'] }] },
  execute(ctx, task) {
    task.artifact(ctx.text)
    task.complete()
  },
})
`

/** The environment without anything that would pick the address, the agent or the log level for the CLI. */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_)/.test(key)))

const projects = []
function cleanUp() {
  killAll()
  for (const dir of projects.splice(0)) rmSync(dir, { recursive: true, force: true })
}
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.once(signal, () => {
    cleanUp()
    process.exit(code)
  })
}

const log = (line) => console.error(line)
const wait = (ms) => new Promise((done) => setTimeout(done, ms))

function makeProject(build) {
  const dir = mkdtempSync(join(tmpdir(), `a2a-dev-startup-${build.name}-`))
  projects.push(dir)
  mkdirSync(join(dir, 'src'))
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(build.dir, join(dir, 'node_modules/a2a-runtime'), 'dir')
  writeFileSync(join(dir, 'src/agent.ts'), agentSource)
  return dir
}

/** Ends a dev server by its PID (its process group): SIGTERM, SIGKILL past STOP_GRACE_MS; fails past STOP_BOUND_MS. */
async function stop(handle) {
  let timer
  const bound = new Promise((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `${handle.name} (PID ${handle.child.pid}) did not exit within ${STOP_BOUND_MS} ms, even after SIGKILL`,
          ),
        ),
      STOP_BOUND_MS,
    )
  })
  try {
    await Promise.race([handle.stop(STOP_GRACE_MS), bound])
  } finally {
    clearTimeout(timer)
  }
}

/** The CPU time (user and system, every thread) `pid` has used, in ms; undefined off Linux. */
function cpuMs(pid) {
  try {
    // Fields after the command name (which may hold spaces) start at its closing parenthesis: utime, stime are 14, 15,
    // in clock ticks of 10 ms (USER_HZ is 100 on Linux).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}

/** One start of `a2a dev` for `build`: ms from the spawn to the card's first 200, and the server's CPU time by then. */
async function startOnce(build) {
  const port = await freePort()
  const handle = start(process.execPath, [build.bin, 'dev'], {
    cwd: build.project,
    env: { ...cleanEnv, PORT: String(port), HOST: '127.0.0.1', A2A_LOG_LEVEL: 'warn' },
    name: `a2a dev (${build.name})`,
  })
  try {
    const wallMs = await Promise.race([
      waitForCard(handle, `http://127.0.0.1:${port}/.well-known/agent.json`, {
        intervalMs: POLL_INTERVAL_MS,
        timeoutMs: ROUND_TIMEOUT_MS,
      }),
      handle.spawnFailed,
    ])
    return { wallMs, cpuMs: cpuMs(handle.child.pid) }
  } finally {
    await stop(handle)
  }
}

/** Nearest rank, as _stats.mjs Samples reports its percentiles. */
const percentile = (values, q) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil(q * values.length) - 1)]
const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length

/**
 * The bootstrap 95% interval of the mean of the paired differences, by _stats.mjs geomeanInterval (the same
 * seeded resampling): the geometric mean of exp(d / s) is exp(mean(d) / s), so the interval it gives for those,
 * taken back through log and s, is the one of the mean of d. s keeps every exp(d / s) within e^±100.
 */
function meanDifferenceInterval(differences) {
  const scale = Math.max(1, ...differences.map(Math.abs)) / 100
  return geomeanInterval(differences.map((d) => Math.exp(d / scale))).map((r) => Math.log(r) * scale)
}

function summarize(samples) {
  return {
    median: median(samples),
    p90: percentile(samples, 0.9),
    min: Math.min(...samples),
    max: Math.max(...samples),
    samples,
  }
}

/** after − before and after / before, paired by round. */
function compare(before, after) {
  const differences = after.map((value, i) => value - before[i])
  const ratios = after.map((value, i) => value / before[i])
  return {
    difference: {
      differenceOfMedians: median(after) - median(before),
      medianPaired: median(differences),
      meanPaired: mean(differences),
      interval95: meanDifferenceInterval(differences),
      intervalOf: 'the mean of the paired differences (bootstrap, 10,000 resamples of the rounds)',
      paired: differences,
    },
    ratio: { geomeanPaired: Math.exp(mean(ratios.map(Math.log))), interval95: geomeanInterval(ratios) },
  }
}

const ms = (value) => `${value.toFixed(1)} ms`
const signedMs = (value) => `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(1)} ms`
const describe = ({ difference, ratio }) => [
  `after − before: difference of the medians ${signedMs(difference.differenceOfMedians)}; paired by round: median ${signedMs(difference.medianPaired)}, mean ${signedMs(difference.meanPaired)} (95% interval ${signedMs(difference.interval95[0])} to ${signedMs(difference.interval95[1])}, bootstrap of the mean of the paired differences)`,
  `after / before: geometric mean of the paired ratios ${ratio.geomeanPaired.toFixed(3)} (95% interval ${ratio.interval95.map((r) => r.toFixed(3)).join('–')})`,
]

let failed = false
try {
  const machine = await backgroundLoad()
  for (const build of builds) build.project = makeProject(build)
  log(
    `a2a dev start-up, spawn to the card's first 200: ${builds.map((build) => `${build.name} ${build.dir}`).join(', ')}; ${rounds} rounds after ${WARMUP_ROUNDS} warm-up rounds; the machine ${Math.round(machine.busy * 100)}% busy before the run`,
  )
  const wall = Object.fromEntries(builds.map((build) => [build.name, []]))
  const cpu = Object.fromEntries(builds.map((build) => [build.name, []]))
  for (let round = -WARMUP_ROUNDS; round < rounds; round++) {
    const order = round % 2 ? [...builds].reverse() : builds
    const times = {}
    for (const build of order) {
      // What the previous server left behind (its exit, freed memory) is not this one's start-up.
      await wait(200)
      times[build.name] = await startOnce(build)
    }
    const line = builds
      .map(
        (build) =>
          `${build.name} ${ms(times[build.name].wallMs)}${times[build.name].cpuMs === undefined ? '' : ` (CPU ${times[build.name].cpuMs} ms)`}`,
      )
      .join(', ')
    if (round < 0) {
      log(`warm-up ${round + WARMUP_ROUNDS + 1}/${WARMUP_ROUNDS}: ${line} (not counted)`)
      continue
    }
    for (const build of builds) {
      wall[build.name].push(times[build.name].wallMs)
      cpu[build.name].push(times[build.name].cpuMs)
    }
    log(
      `round ${round + 1}/${rounds} (${order.map((build) => build.name).join(' first, ')}${order.length > 1 ? ' second' : ''}): ${line}`,
    )
  }
  const withCpu = builds.every((build) => cpu[build.name].every((value) => value !== undefined))

  const result = {
    rounds,
    warmupRounds: WARMUP_ROUNDS,
    machineBusyBefore: machine.busy,
    node: process.version,
    builds: Object.fromEntries(
      builds.map((build) => [
        build.name,
        { runtime: build.dir, ...summarize(wall[build.name]), ...(withCpu && { cpu: summarize(cpu[build.name]) }) },
      ]),
    ),
  }
  const lines = [`a2a dev start-up (spawn to the card's first 200), ${rounds} rounds, Node ${process.version}`]
  for (const build of builds) {
    const figures = result.builds[build.name]
    lines.push(
      `${build.name.padEnd(6)} median ${ms(figures.median)}, p90 ${ms(figures.p90)} (min ${ms(figures.min)}, max ${ms(figures.max)})${withCpu ? `; CPU by then median ${ms(figures.cpu.median)}` : ''}  ${build.dir}`,
    )
  }
  if (builds.length === 2) {
    const { difference, ratio } = compare(wall.before, wall.after)
    const [low, high] = difference.interval95
    const verdict =
      high <= GOAL_MS
        ? `met: the interval's upper end is at most ${GOAL_MS} ms`
        : low > GOAL_MS
          ? `not met: the whole interval is over ${GOAL_MS} ms`
          : `not shown: the interval reaches past ${GOAL_MS} ms (more rounds, or a quieter machine)`
    Object.assign(result, {
      difference,
      ratio,
      goal: { maxAddedMs: GOAL_MS, judgedOn: 'wall time', met: high <= GOAL_MS, verdict },
    })
    lines.push(...describe({ difference, ratio }))
    if (withCpu) {
      result.cpu = compare(cpu.before, cpu.after)
      lines.push(...describe(result.cpu).map((text) => `CPU by the first 200, ${text}`))
    }
    lines.push(`goal, at most ${GOAL_MS} ms added (wall time): ${verdict}`)
  }
  if (values.json) console.log(JSON.stringify(result, null, 2))
  else console.log(lines.join('\n'))
} catch (error) {
  failed = true
  console.error(`dev-startup failed: ${error.stack ?? error}`)
} finally {
  cleanUp()
}
if (failed) process.exit(1)
