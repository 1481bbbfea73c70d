// What the report says about where it ran: CPU, cores, Node, versions, the commit, and how busy the machine
// already was. Figures from a machine that something else is loading are not comparable with others, so the
// share of CPU busy before and after the run (from /proc/stat) goes into the report.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { availableParallelism, loadavg, totalmem } from 'node:os'
import { join } from 'node:path'

function readVersion(...candidates) {
  for (const file of candidates) if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')).version
  return 'unknown'
}

export function describeMachine(repoRoot) {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : ''
  const git = (...args) => spawnSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).stdout?.trim() ?? ''
  const pkg = (name) =>
    readVersion(
      join(repoRoot, 'bench/node_modules', name, 'package.json'),
      join(repoRoot, 'node_modules', name, 'package.json'),
    )
  return {
    date: new Date().toString(),
    cpuModel: /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1] ?? 'unknown CPU',
    cores: availableParallelism(),
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    commit: git('rev-parse', '--short', 'HEAD') || 'unknown',
    runtimeDirty: git('status', '--porcelain', '--', 'runtime') !== '',
    runtimeVersion: readVersion(join(repoRoot, 'runtime/package.json')),
    sdkVersion: pkg('@a2a-js/sdk'),
    expressVersion: pkg('express'),
    autocannonVersion: pkg('autocannon'),
  }
}

function cpuTimes() {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  const idle = line[3] + (line[4] ?? 0) // idle + iowait
  return { idle, total: line.reduce((a, b) => a + b, 0) }
}

/** The share of all CPUs busy over `ms` while the bench itself does nothing, and the 1-minute load average. */
export async function backgroundLoad(ms = 1000) {
  if (!existsSync('/proc/stat')) return { busy: NaN, loadavg: loadavg()[0] }
  const before = cpuTimes()
  await new Promise((resolve) => setTimeout(resolve, ms))
  const after = cpuTimes()
  const total = after.total - before.total
  return { busy: total > 0 ? 1 - (after.idle - before.idle) / total : NaN, loadavg: loadavg()[0] }
}
