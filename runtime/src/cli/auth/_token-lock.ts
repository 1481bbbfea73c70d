import { randomBytes } from 'node:crypto'
import { linkSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync } from 'node:fs'
import { hostname } from 'node:os'
import { dirname } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { CommandFailure } from '../output/_failures.js'
import { createPrivateFile, failureCode } from './_private-file.js'

/**
 * One command at a time changes the token file. Two commands renewing the same token at once would both spend its
 * refresh token: where the server rotates them (each works once, as OAuth 2.1 asks for public clients), the second
 * is refused, or the server revokes the whole family. And two read-modify-writes at once would drop what the
 * first wrote. So a change holds `<token file>.lock`, a file created only if absent (`wx`), which names its holder.
 */

/** How long a command waits for another to finish: more than one request to the authorization server (15 s). */
const WAIT_MS = 30_000
/** A lock this old was left by a command that died holding it: none holds it for longer than a request. */
const STALE_MS = 60_000
const POLL_MS = 50

/** Runs `change` while holding the token file's lock; the lock is let go whatever `change` does. */
export async function withTokenLock<T>(tokenFile: string, change: () => Promise<T>): Promise<T> {
  const lock = `${tokenFile}.lock`
  const holder = await acquire(lock)
  try {
    return await change()
  } finally {
    release(lock, holder)
  }
}

/** Takes the lock (waiting for another holder, breaking a stale one) and answers what it wrote in it. */
async function acquire(lock: string): Promise<string> {
  mkdirSync(dirname(lock), { recursive: true, mode: 0o700 })
  const holder = `${hostname()} ${process.pid} ${randomBytes(8).toString('hex')}\n`
  const deadline = Date.now() + WAIT_MS
  for (;;) {
    if (create(lock, holder)) return holder
    const seen = read(lock)
    if (seen !== undefined && isStale(lock, seen)) breakStale(lock, seen)
    else if (Date.now() > deadline)
      throw new CommandFailure(
        'A2ACLI_ERR_INTERNAL',
        `Another a2a command has held ${lock} for over ${WAIT_MS / 1000} s`,
        `if no other a2a command runs, remove it: rm ${lock}`,
      )
    // Spread out, so two waiters do not retry in step.
    else await sleep(POLL_MS + Math.random() * POLL_MS)
  }
}

/** Creates the lock naming `holder`; false when another command holds it. */
function create(lock: string, holder: string): boolean {
  try {
    createPrivateFile(lock, holder)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw cannot('create', lock, error)
  }
}

/** The lock's holder line; undefined when it went away meanwhile. */
function read(lock: string): string | undefined {
  try {
    return readFileSync(lock, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw cannot('read', lock, error)
  }
}

/** Left over: its holder, a process of this machine, has ended; or (any machine) it is older than STALE_MS. */
function isStale(lock: string, seen: string): boolean {
  const [host, pid] = seen.split(' ')
  if (host === hostname() && Number(pid) > 0 && !isRunning(Number(pid))) return true
  try {
    return Date.now() - statSync(lock).mtimeMs > STALE_MS
  } catch {
    // Gone meanwhile: the next attempt takes it.
    return false
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

/**
 * Removes a stale lock. Moved aside first (a rename is atomic), then checked: should another command have taken
 * the lock between the look and the move, its lock is put back (a link, which fails if a third one took it since).
 */
function breakStale(lock: string, seen: string): void {
  const aside = `${lock}.${randomBytes(6).toString('hex')}.stale`
  try {
    renameSync(lock, aside)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw cannot('remove the stale', lock, error)
  }
  try {
    if (read(aside) !== seen) linkSync(aside, lock)
  } catch {
    // A third command holds the lock now: it goes on.
  } finally {
    try {
      unlinkSync(aside)
    } catch {}
  }
}

/** Lets go of the lock, unless it is no longer this command's (broken as stale while it was held). */
function release(lock: string, holder: string): void {
  try {
    if (read(lock) === holder) unlinkSync(lock)
  } catch {
    // Left behind, it is broken as stale by the next command.
  }
}

function cannot(what: string, lock: string, error: unknown): CommandFailure {
  return new CommandFailure('A2ACLI_ERR_INTERNAL', `Cannot ${what} lock ${lock}: ${failureCode(error)}`)
}
