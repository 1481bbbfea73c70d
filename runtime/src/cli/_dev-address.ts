import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isObject } from './_client.js'

/**
 * Where the running `a2a dev` of a project listens: `a2a dev` may move to the next free port, so the commands
 * that talk to "this project's agent" read the address here instead of guessing from PORT. The file lives in
 * the project's `.a2a/` folder (ignored by git) and is removed when the server stops.
 */
export const DEV_ADDRESS_FILE = join('.a2a', 'dev.json')

interface DevAddress {
  url: string
  pid: number
}

/** Writes the address for this process; `remove()` deletes it unless another dev server has since taken it. */
export function publishDevAddress(root: string, url: string): { remove(): void } {
  const path = join(root, DEV_ADDRESS_FILE)
  const record: DevAddress = { url, pid: process.pid }
  try {
    mkdirSync(join(root, '.a2a'), { recursive: true })
    // Written whole, then renamed: a reader never sees half a file.
    const temporary = `${path}.${process.pid}.tmp`
    writeFileSync(temporary, `${JSON.stringify(record)}\n`)
    renameSync(temporary, path)
  } catch {
    // A read-only project still gets its dev server; `a2a send` then falls back to PORT.
  }
  return {
    remove() {
      if (readRecord(path)?.pid === process.pid) rmSync(path, { force: true })
    },
  }
}

/** The running dev server's address for the project in `root`, if its process is still alive. */
export function runningDevAddress(root: string): string | undefined {
  const record = readRecord(join(root, DEV_ADDRESS_FILE))
  return record && isAlive(record.pid) ? record.url : undefined
}

function readRecord(path: string): DevAddress | undefined {
  try {
    const record = JSON.parse(readFileSync(path, 'utf8')) as unknown
    if (isObject(record) && typeof record.url === 'string' && URL.canParse(record.url) && Number.isInteger(record.pid)) return record as unknown as DevAddress
  } catch {
    // No file, or not ours to read: no dev server.
  }
  return undefined
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
