import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { isObject } from '../_is-object.js'
import { isLoopbackHost } from '../cli/_loopback.js'

/**
 * Where the running `a2a dev` of a project listens: `a2a dev` may move to the next free port, so the commands
 * that talk to "this project's agent" read the address here instead of guessing from PORT. The file lives in
 * the project's `.a2a/` folder (ignored by git) and is removed when the server stops.
 *
 * A repository could ship this file, so a reader believes it only as far as it cannot do harm: an http
 * address on this machine, in a regular file of the user's own (not a link to elsewhere).
 */
export const DEV_ADDRESS_FILE = join('.a2a', 'dev.json')

interface DevAddress {
  url: string
  pid: number
}

/** What the file says: a dev server's address, or why it was not believed. */
export type DevAddressLookup = { url: string } | { ignored: string }

/** More than any real record; a reader never takes in a big planted file. */
const RECORD_BYTES_LIMIT = 4096
/** Wildcard listen addresses, as listhen writes them into its URL, and the loopback address reaching them. */
const WILDCARD_TO_LOOPBACK: Record<string, string> = { '0.0.0.0': '127.0.0.1', '[::]': '[::1]', '': 'localhost' }

/**
 * Writes the address for this process; `remove()` deletes it unless another dev server has since taken it.
 * A server on a wildcard address is written as its loopback address; one on a single other interface is
 * not written at all (readers would not believe it, and the loopback address would not reach it). While another
 * dev server of the project runs and holds the file, it is left to that one (`heldBy` is its address): a second
 * `a2a dev` that wrote its own and removed it on exit would leave `a2a send` with no address for the first.
 */
export function publishDevAddress(root: string, listening: string): { remove(): void; heldBy?: string } {
  const path = join(root, DEV_ADDRESS_FILE)
  const url = reachableFromHere(listening)
  if (!url) return { remove() {} }
  const running = runningDevAddress(root)
  if (running && 'url' in running && running.url !== url) return { remove() {}, heldBy: running.url }
  const record: DevAddress = { url, pid: process.pid }
  const temporary = `${path}.${process.pid}.tmp`
  try {
    mkdirSync(join(root, '.a2a'), { recursive: true })
    // Written whole, then renamed: a reader never sees half a file.
    writeFileSync(temporary, `${JSON.stringify(record)}\n`)
    renameSync(temporary, path)
  } catch {
    // A read-only project still gets its dev server; `a2a send` then falls back to PORT. A rename that failed
    // must not leave its temporary file behind.
    rmSync(temporary, { force: true })
  }
  return {
    remove() {
      const read = readRecord(path)
      if (read && 'record' in read && read.record.pid === process.pid) rmSync(path, { force: true })
    },
  }
}

/** The address another command on this machine reaches the server at, if there is one. */
function reachableFromHere(listening: string): string | undefined {
  const url = new URL(listening)
  const loopback = WILDCARD_TO_LOOPBACK[url.hostname]
  if (loopback !== undefined) url.hostname = loopback
  return url.protocol === 'http:' && isLoopbackHost(url.hostname) ? url.href : undefined
}

/**
 * The running dev server's address for the project in `root`, if its process is still alive; or why the file
 * there was not believed. Nothing when there is no file or its server has stopped.
 */
export function runningDevAddress(root: string): DevAddressLookup | undefined {
  const read = readRecord(join(root, DEV_ADDRESS_FILE))
  if (!read) return undefined
  if ('ignored' in read) return read
  const { url, pid } = read.record
  const parsed = new URL(url)
  if (parsed.protocol !== 'http:' || !isLoopbackHost(parsed.hostname) || parsed.username || parsed.password) {
    return { ignored: `it names ${url}, which is not an http address on this machine (a dev server writes only those)` }
  }
  return isOurs(pid) ? { url } : undefined
}

type RecordRead = { record: DevAddress } | { ignored: string }

function readRecord(path: string): RecordRead | undefined {
  let fd: number
  try {
    // No following a link, no waiting on a FIFO: the file must be a plain file of its own.
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP' || code === 'EMLINK')
      return { ignored: 'it is a symbolic link (a dev server writes a plain file)' }
    return undefined // no file, or not ours to read: no dev server
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) return { ignored: 'it is not a plain file' }
    const uid = process.getuid?.()
    if (uid !== undefined && stat.uid !== uid)
      return { ignored: `it belongs to another user (uid ${stat.uid}), not to you (uid ${uid})` }
    const buffer = Buffer.alloc(RECORD_BYTES_LIMIT)
    const length = readSync(fd, buffer, 0, buffer.length, null)
    const record = JSON.parse(buffer.subarray(0, length).toString('utf8')) as unknown
    if (isObject(record) && typeof record.url === 'string' && URL.canParse(record.url) && Number.isInteger(record.pid))
      return { record: record as unknown as DevAddress }
    return { ignored: 'it is not a dev server address ({"url": ..., "pid": ...})' }
  } catch {
    return { ignored: 'it is not a dev server address ({"url": ..., "pid": ...})' }
  } finally {
    closeSync(fd)
  }
}

/** Alive and started by this user: a dev server of this project is the user's own process. */
function isOurs(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    // ESRCH: gone. EPERM: another user's process, so not the dev server this user started.
    return false
  }
}
