// Start-up: from spawn until the card answers 200 (polled every 5 ms), for servers taken in rounds, each round every
// server once, the order reversed every other round (a start right after another's exit, or after the same
// server's, is a little faster: alternating spreads that over all of them). Per server: the median, p90, min and
// max of the wall time, and the median CPU time the process had used by then (from /proc), which a busy machine
// stretches far less than the wall time. One uncounted start of each server comes first.
//
// The rows beyond the three servers of the main run (startupTargets): `a2a start` of the generated project on each
// Node the bench has (on Node 22.1 and later the CLI keeps V8's compile cache), serveAgent in a script on Node, Bun
// and Deno (servers/echo-runtime.mjs), the floor of h3 and srvx on each Node (servers/h3-floor.mjs: a card and no
// runtime), and the bare node:http server as the yardstick. Workers are not measured
// here: `wrangler dev` bundles the Worker and starts workerd, seconds that say nothing of a deployed Worker's start.
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot } from './_project.mjs'
import { RUNTIMES } from './_runtimes.mjs'
import { launch } from './_server.mjs'
import { median } from './_stats.mjs'
import { platform } from './_targets.mjs'

const serversDir = join(repoRoot, 'bench/servers')
const runtimeEntry = join(repoRoot, 'runtime/dist/index.js')

/** The nearest-rank quantile `q` of `values`. */
function quantile(values, q) {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]
}

/**
 * `rounds` rounds over `targets` (each { name, command, env? } as _server.mjs launches them); resolves with
 * { [name]: { runs, cpuMs, median, p90, min, max, cpuMedian } } in milliseconds.
 */
export async function startupRounds(targets, { rounds, pinning, log = () => {} }) {
  // One start of each first, not counted: the first start after a build reads cold files and fills jiti's cache.
  for (const target of targets) await (await launch(target, { pinning, env: target.env })).stop()
  const runs = Object.fromEntries(targets.map((target) => [target.name, { runs: [], cpuMs: [] }]))
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse()
    for (const target of order) {
      const server = await launch(target, { pinning, env: target.env })
      runs[target.name].runs.push(server.readyMs)
      runs[target.name].cpuMs.push(server.cpuSeconds() * 1000)
      await server.stop()
    }
    log(
      `startup round ${round + 1}/${rounds}: ${targets.map((t) => `${t.name} ${last(runs[t.name].runs)}`).join(', ')}`,
    )
  }
  return Object.fromEntries(
    Object.entries(runs).map(([name, r]) => [
      name,
      {
        ...r,
        median: median(r.runs),
        p90: quantile(r.runs, 0.9),
        min: Math.min(...r.runs),
        max: Math.max(...r.runs),
        cpuMedian: median(r.cpuMs),
      },
    ]),
  )
}

const last = (values) => Math.round(values.at(-1))

/**
 * The start-up rows of every runtime: `a2a start` of the generated project (`ours`, its command from
 * _project.mjs's startCommand) on each Node of _runtimes.mjs, serveAgent in a script on each runtime that serves
 * over its own HTTP server, and bare node:http.
 */
export function startupTargets(ours) {
  const targets = []
  for (const runtime of RUNTIMES) {
    if (runtime.serves === 'node') {
      targets.push({
        name: `a2a start (${runtime.name})`,
        label: `a2a start on ${runtime.name}`,
        dialect: platform,
        command: () => ({ command: runtime.argv[0], args: ours.args, cwd: ours.cwd }),
        env: runtime.env,
      })
    }
  }
  for (const runtime of RUNTIMES) {
    if (runtime.serves === 'worker') continue
    targets.push({
      name: `serveAgent (${runtime.name})`,
      label: `servers/echo-runtime.mjs on ${runtime.name}`,
      dialect: platform,
      command: () => ({
        command: runtime.argv[0],
        args: [...runtime.argv.slice(1), join(serversDir, 'echo-runtime.mjs')],
        cwd: serversDir,
      }),
      env: { ...runtime.env, A2A_RUNTIME_ENTRY: runtimeEntry },
    })
  }
  // The floor of the runtime's HTTP layer on each Node: what h3 and srvx cost a start (servers/h3-floor.mjs).
  for (const runtime of RUNTIMES) {
    if (runtime.serves !== 'node') continue
    targets.push({
      name: `h3 + srvx floor (${runtime.name})`,
      label: `servers/h3-floor.mjs on ${runtime.name}`,
      dialect: platform,
      command: () => ({ command: runtime.argv[0], args: [join(serversDir, 'h3-floor.mjs')], cwd: serversDir }),
      env: runtime.env,
    })
  }
  targets.push({
    name: 'bare node:http',
    label: 'servers/ceiling.mjs',
    dialect: platform,
    command: () => ({ command: process.execPath, args: [join(serversDir, 'ceiling.mjs')], cwd: serversDir }),
  })
  return targets
}

/**
 * `a2a start` as a new container starts it (`--containers`), on Node 24 as the generated image runs: its temporary
 * folder is all a container keeps of what earlier starts compiled (jiti's TypeScript, Node's compile cache), so each
 * start gets it as the image has it. "cold temp folder": empty, as an image built without a warm-up start has it;
 * "image's caches": as the Dockerfile's warm-up start at build leaves it (taken from the uncounted first start and
 * put back before each start). `workDir` is a folder of the caller's, removed by the caller.
 */
export function containerTargets(ours, workDir) {
  const node24 = RUNTIMES.find((runtime) => runtime.name.startsWith('node 24'))
  const target = (name, keepsImageCaches) => {
    const tmp = join(workDir, `${keepsImageCaches ? 'image' : 'cold'}-tmp`)
    const image = join(workDir, 'image-caches')
    return {
      name: `a2a start, new container (${node24.name}, ${name})`,
      label: `a2a start on ${node24.name}, TMPDIR ${name}`,
      dialect: platform,
      env: { ...node24.env, TMPDIR: tmp },
      command: () => {
        // The first start (uncounted) fills an empty folder: what the image's warm-up leaves, kept from then on.
        if (keepsImageCaches && !existsSync(image) && existsSync(tmp) && readdirSync(tmp).length > 0)
          cpSync(tmp, image, { recursive: true })
        rmSync(tmp, { recursive: true, force: true })
        if (keepsImageCaches && existsSync(image)) cpSync(image, tmp, { recursive: true })
        else mkdirSync(tmp, { recursive: true })
        return { command: node24.argv[0], args: ours.args, cwd: ours.cwd }
      },
    }
  }
  return [target('cold temp folder', false), target("image's caches", true)]
}
