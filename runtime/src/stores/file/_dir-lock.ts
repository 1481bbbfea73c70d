import { randomUUID } from 'node:crypto'
import { closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigurationError } from '../../errors.js'

/**
 * The file store's claim on its directory: a `lock` file naming the process that holds it. Two processes on one
 * log would each delete segments the other still reads and number records the other does not know of, so a
 * second process refuses to start. A lock left by a process that died is taken over.
 * It covers the processes of one machine (it asks the kernel whether the holder lives).
 */
export class DirectoryLock {
  readonly path: string
  readonly #token: string

  private constructor(path: string, token: string) {
    this.path = path
    this.#token = token
  }

  /** Takes the directory's lock, or throws a ConfigurationError naming the process that holds it. */
  static take(dir: string): DirectoryLock {
    const path = join(dir, 'lock')
    const token = randomUUID()
    const mine = `${JSON.stringify({ pid: process.pid, started: startTime(process.pid), token } satisfies Holder)}\n`
    // A few rounds: each one that fails lost a race with another process taking over the same stale lock.
    for (let round = 0; round < 5; round++) {
      if (create(path, mine)) return new DirectoryLock(path, token)
      const found = read(path)
      if (found === undefined) continue
      const holder = parseHolder(found)
      if (holder && holds(holder)) {
        throw new ConfigurationError(
          `Task store: ${dir} is in use by another server process (pid ${holder.pid}); one process per directory: stop that one, or give this one another directory (A2A_STORE=file:<directory>)`,
        )
      }
      if (!holder && Date.now() - modifiedAt(path) < HALF_WRITTEN_GRACE_MS) {
        throw new ConfigurationError(
          `Task store: ${dir} is being opened by another server process (its lock is not written yet); one process per directory`,
        )
      }
      takeOver(path, found)
    }
    throw new ConfigurationError(`Task store: could not take the lock of ${dir}: other processes keep taking it`)
  }

  /** Lets the directory go, unless another store of this process has taken it over since. */
  release(): void {
    try {
      const found = read(this.path)
      if (found !== undefined && parseHolder(found)?.token === this.#token) unlinkSync(this.path)
    } catch {
      // The directory is gone or unreadable: a lock left behind names a process that will have ended, and the
      // next start takes it over.
    }
  }
}

/** What the lock file says (one line of JSON). */
interface Holder {
  pid: number
  /** When that process started, as the kernel counts it (Linux): a pid reused by another process does not match. */
  started: string | undefined
  token: string
}

// A lock file is created empty and written at once; one still empty after this long was left by a process that
// died in between.
const HALF_WRITTEN_GRACE_MS = 10_000

/** Creates the lock file if none exists (atomically: `wx`), with `content`; false when one exists. */
function create(path: string, content: string): boolean {
  let fd: number
  try {
    fd = openSync(path, 'wx')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
  try {
    writeSync(fd, content)
  } finally {
    closeSync(fd)
  }
  return true
}

/** Whether the process the lock names still runs. */
function holds(holder: Holder): boolean {
  // This very process: a store made again in it after the first one was dropped without close(). The files are
  // its own, and a process must be able to open its directory again.
  if (holder.pid === process.pid) return false
  if (!alive(holder.pid)) return false
  // Alive, but another process than the one that wrote the lock when it started at another time: the pid was
  // reused (a container restarted, the machine rebooted). Where start times cannot be read, a live pid holds.
  const started = startTime(holder.pid)
  return holder.started === undefined || started === undefined || started === holder.started
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The process's start time in clock ticks since boot (Linux, /proc/<pid>/stat field 22), else undefined. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces and parentheses: count the fields from its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

/**
 * Removes a stale lock. Renamed away first, not unlinked: of several processes taking over the same stale lock,
 * one renames it; and one that finds it renamed a fresh lock instead (another took over between its read and its
 * rename) puts that one back.
 */
function takeOver(path: string, stale: string): void {
  const aside = `${path}.${randomUUID()}`
  try {
    renameSync(path, aside)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw error
  }
  try {
    if (read(aside) !== stale) linkSync(aside, path)
  } catch {
    // Another lock is in place already: the next round finds it.
  } finally {
    unlinkSync(aside)
  }
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

function parseHolder(text: string): Holder | undefined {
  try {
    const value = JSON.parse(text) as Partial<Holder>
    if (!Number.isSafeInteger(value.pid) || (value.pid as number) <= 0 || typeof value.token !== 'string')
      return undefined
    return {
      pid: value.pid as number,
      started: typeof value.started === 'string' ? value.started : undefined,
      token: value.token,
    }
  } catch {
    return undefined
  }
}

function modifiedAt(path: string): number {
  try {
    return statSync(path).mtimeMs
  } catch {
    return 0
  }
}
