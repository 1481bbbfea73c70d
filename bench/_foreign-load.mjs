// How much CPU processes other than the bench used while it ran. A long run on a shared machine meets other
// work; the before/after readings of _machine.mjs miss what came and went in between. Every second: the CPU
// time all cores spent busy (/proc/stat), less what this process and its descendants used (its own times, its
// waited-for children's, and those of its descendants still running), is what the rest of the machine took.
import { readdirSync, readFileSync } from 'node:fs'

const TICKS = 100 // USER_HZ

function busyTicks() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  // user nice system idle iowait irq softirq steal: everything but idle and iowait
  return fields.slice(0, 8).reduce((a, b) => a + b, 0) - fields[3] - (fields[4] ?? 0)
}

/** Fields after the command name (which may hold spaces): state is [0], ppid [1], utime [11], stime [12]. */
function statFields(pid) {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
}

function ownTicks() {
  const self = statFields(process.pid)
  // utime, stime, and cutime, cstime: the children that have exited and been waited for.
  let ticks = Number(self[11]) + Number(self[12]) + Number(self[13]) + Number(self[14])
  // Every running descendant, not only children: a PostgreSQL server's backends are its children.
  const processes = new Map()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const fields = statFields(name)
      // Its own times and those of its children that have exited (a server's ended backends).
      const used = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])
      processes.set(Number(name), { parent: Number(fields[1]), ticks: used })
    } catch {} // gone meanwhile
  }
  const ours = (pid) => {
    for (let at = pid, hops = 0; at > 1 && hops < 64; at = processes.get(at)?.parent ?? 0, hops++)
      if (at === process.pid) return true
    return false
  }
  for (const [pid, { ticks: used }] of processes) if (pid !== process.pid && ours(pid)) ticks += used
  return ticks
}

/**
 * Starts sampling; `part(name)` closes the current part and opens another; `stop()` resolves with, per part
 * and for the whole run, the mean of the foreign CPU (in cores) and its peak over any 5-second window.
 */
export function watchForeignLoad() {
  let supported = true
  let last
  try {
    last = { busy: busyTicks(), own: ownTicks() }
  } catch {
    supported = false
  }
  const samples = [] // { part, cores } per second
  let part = 'start'
  const timer = setInterval(() => {
    const now = { busy: busyTicks(), own: ownTicks() }
    samples.push({ part, cores: Math.max(0, now.busy - last.busy - (now.own - last.own)) / TICKS })
    last = now
  }, 1000)
  timer.unref()
  if (!supported) clearInterval(timer)
  const summarise = (list) => {
    if (!list.length) return { meanCores: NaN, peak5sCores: NaN, seconds: 0 }
    let peak = 0
    for (let i = 0; i + 5 <= list.length || (i === 0 && list.length < 5); i++) {
      const window = list.slice(i, i + 5)
      peak = Math.max(peak, window.reduce((a, s) => a + s.cores, 0) / window.length)
    }
    return { meanCores: list.reduce((a, s) => a + s.cores, 0) / list.length, peak5sCores: peak, seconds: list.length }
  }
  return {
    part(name) {
      part = name
    },
    stop() {
      clearInterval(timer)
      const parts = {}
      for (const name of new Set(samples.map((s) => s.part)))
        parts[name] = summarise(samples.filter((s) => s.part === name))
      return { supported, whole: summarise(samples), parts }
    },
  }
}
