// Child processes of the bench: servers under test and load generators. Every child is started detached (its
// own process group) and remembered, so it is ended by its PID/group and never by name, and so the bench
// can end all of them on SIGINT/SIGTERM or an exception before it exits.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { availableParallelism } from 'node:os'
import { delimiter, join } from 'node:path'
import { performance } from 'node:perf_hooks'

const running = new Set()

/** The taskset prefix for one core, or [] when pinning is unavailable (no taskset, one core, or refused). */
export function pinningSupport() {
  if (process.platform !== 'linux' || availableParallelism() < 2) return { pinned: false, why: 'fewer than 2 cores' }
  const taskset = (process.env.PATH ?? '')
    .split(delimiter)
    .map((dir) => join(dir, 'taskset'))
    .find((file) => existsSync(file))
  if (!taskset) return { pinned: false, why: 'taskset not found' }
  // A container may not own CPUs 0 and 1 even with two of them available: try both before relying on them.
  for (const core of ['0', '1']) {
    if (spawnSync(taskset, ['-c', core, 'true']).status !== 0)
      return { pinned: false, why: `taskset -c ${core} refused` }
  }
  return { pinned: true, taskset }
}

export function pinPrefix(pinning, core) {
  return pinning.pinned ? [pinning.taskset, '-c', String(core)] : []
}

/** A port nobody listens on right now: bind port 0 on 127.0.0.1, note it, let it go. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}

/**
 * Starts `command args` in its own process group, output kept (the last 64 KB) for error messages. The
 * returned handle has `exited` (a promise of the exit code) and `stop()`.
 */
export function start(command, args, { cwd, env, name }) {
  const startedAt = performance.now()
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  let stdout = ''
  const keep = (chunk) => {
    output = (output + chunk).slice(-65_536)
  }
  child.stdout.on('data', (chunk) => {
    keep(chunk)
    stdout = (stdout + chunk).slice(-1_048_576)
  })
  child.stderr.on('data', keep)
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)))
  const spawnFailed = new Promise((_, reject) => child.once('error', reject))
  spawnFailed.catch(() => {})
  const handle = {
    name,
    child,
    startedAt,
    exited,
    spawnFailed,
    /** stdout and stderr interleaved, the last 64 KB. */
    get output() {
      return output
    },
    get stdout() {
      return stdout
    },
    get alive() {
      return child.exitCode === null && child.signalCode === null
    },
    /** SIGTERM to the child's group, SIGKILL after `graceMs`; resolves once it has exited. */
    async stop(graceMs = 3000) {
      if (handle.alive) signalGroup(child.pid, 'SIGTERM')
      const timer = setTimeout(() => signalGroup(child.pid, 'SIGKILL'), graceMs)
      await exited
      clearTimeout(timer)
      // Whatever the server left in its group (nothing, normally) goes too.
      signalGroup(child.pid, 'SIGKILL')
      running.delete(handle)
    },
  }
  running.add(handle)
  return handle
}

function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal)
  } catch {}
}

/** Runs a command to its end (killed past `timeoutMs`); resolves with its code and output. */
export async function runToEnd(command, args, { cwd, env, name, timeoutMs }) {
  const handle = start(command, args, { cwd, env, name })
  const timer = setTimeout(() => handle.stop(0), timeoutMs)
  try {
    const code = await Promise.race([handle.exited, handle.spawnFailed])
    return { code, output: handle.output, stdout: handle.stdout }
  } finally {
    clearTimeout(timer)
    running.delete(handle)
  }
}

/** Ends every child still running (by group), synchronously enough for an exit handler. */
export function killAll(signal = 'SIGKILL') {
  for (const handle of running) signalGroup(handle.child.pid, signal)
  running.clear()
}

/** One GET; resolves with the status (0 when the connection fails). No keep-alive, so no socket lingers. */
export function getStatus(url, { headers = {}, timeoutMs = 1000 } = {}) {
  return new Promise((resolve) => {
    const req = request(url, { headers, agent: false, timeout: timeoutMs }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode))
    })
    req.once('timeout', () => req.destroy())
    req.once('error', () => resolve(0))
    req.end()
  })
}

/**
 * Polls `url` every `intervalMs` until it answers 200; resolves with the milliseconds since the handle was
 * spawned. Fails with the server's output when it exits first or `timeoutMs` passes.
 */
export async function waitForCard(handle, url, { intervalMs = 5, timeoutMs = 30_000 } = {}) {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    if ((await getStatus(url)) === 200) return performance.now() - handle.startedAt
    if (!handle.alive) throw new Error(`${handle.name} exited before answering ${url}:\n${handle.output}`)
    if (performance.now() > deadline)
      throw new Error(`${handle.name} did not answer ${url} within ${timeoutMs} ms:\n${handle.output}`)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}
