// `node bench/startup.mjs [--rounds 10] [--project <cache dir>] [--only <name part>]… [--containers] [--json]
// [--no-pin]` (after a build): the start-up rows alone (_startup.mjs), each server from spawn to its card's first
// 200, in rounds that take every server in turn, the order alternating. Prints a table (or the JSON with --json):
// per server the median, p90, min and max, the median CPU time used by then, and the median's ratio to bare
// node:http's. `--containers` adds `a2a start` as a new container starts it, with and without the image's caches.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { pinningSupport } from './_processes.mjs'
import { prepareProject, startCommand } from './_project.mjs'
import { runAndExit, runCleanups } from './_publish.mjs'
import { table } from './_report.mjs'
import { containerTargets, startupRounds, startupTargets } from './_startup.mjs'

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    project: { type: 'string' },
    only: { type: 'string', multiple: true, default: [] },
    containers: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    'no-pin': { type: 'boolean', default: false },
  },
})
const rounds = Number(flags.rounds)
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer, got ${flags.rounds}`)

const log = (line) => process.stderr.write(`[startup] ${line}\n`)
const { add: afterRun, cleanup } = runCleanups(log)

async function main() {
  const pinning = flags['no-pin'] ? { pinned: false, why: '--no-pin' } : pinningSupport()
  const project = await prepareProject(flags.project, log)
  afterRun(() => project.dispose())
  // Servers on CPU 0 (launch pins them), the bench polling their cards on CPU 1, as in the main run.
  if (pinning.pinned) spawnSync(pinning.taskset, ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' })
  const yardstick = 'bare node:http'
  const ours = startCommand(project.dir)
  const all = startupTargets(ours)
  if (flags.containers) {
    const workDir = mkdtempSync(join(tmpdir(), 'a2a-bench-containers-'))
    afterRun(() => rmSync(workDir, { recursive: true, force: true }))
    all.push(...containerTargets(ours, workDir))
  }
  const targets = all.filter(
    (target) =>
      target.name === yardstick || flags.only.length === 0 || flags.only.some((part) => target.name.includes(part)),
  )
  const results = await startupRounds(targets, { rounds, pinning, log })
  if (flags.json) {
    console.log(JSON.stringify({ rounds, pinned: pinning.pinned, results }))
    return 0
  }
  const f = (n) => n.toFixed(1)
  console.log(
    table(
      ['server', 'median ms', 'p90 ms', 'min ms', 'max ms', 'CPU ms (median)', 'vs bare node:http'],
      Object.entries(results).map(([name, r]) => [
        name,
        f(r.median),
        f(r.p90),
        f(r.min),
        f(r.max),
        f(r.cpuMedian),
        `${(r.median / results[yardstick].median).toFixed(2)}x`,
      ]),
    ),
  )
  return 0
}

await runAndExit(main, cleanup, log)
