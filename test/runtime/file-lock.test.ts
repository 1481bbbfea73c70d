import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createFileStore } from 'a2a-runtime/file-store'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import { type FixtureAgent, startFixtureAgent } from './_fixture-process.ts'

// One server process per file store directory: the store's lock file (`<dir>/lock`) names the process that holds
// it. Each test's other process is a real agent process on the same directory.

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-file-lock-test-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function startAgentProcess(dir: string): Promise<FixtureAgent<unknown>> {
  const process = await startFixtureAgent<unknown>('file-store-agent.mjs', { A2A_STORE: `file:${dir}` })
  cleanups.push(() => process.kill())
  return process
}

function open(dir: string) {
  const store = createFileStore({ dir })
  cleanups.push(() => store.close())
  return store
}

const lockHolder = (dir: string) => JSON.parse(readFileSync(join(dir, 'lock'), 'utf8')) as { pid: number }
const inUse = (dir: string, pid: number) =>
  `Task store: ${dir} is in use by another server process (pid ${pid}); one process per directory`

describe('the file store lock: one process per directory', () => {
  it('refuses a second store on a directory another live process holds, naming the directory and its pid; a second agent process exits saying so', async () => {
    const dir = tempDir()
    const holder = await startAgentProcess(dir)
    expect(() => createFileStore({ dir })).toThrow(ConfigurationError)
    expect(() => createFileStore({ dir })).toThrow(inUse(dir, holder.pid))
    await expect(startFixtureAgent('file-store-agent.mjs', { A2A_STORE: `file:${dir}` })).rejects.toThrow(
      inUse(dir, holder.pid),
    )
    expect(holder.alive()).toBe(true)
  })

  it('takes over the lock of a process that died (SIGKILL), with the tasks it left', async () => {
    const dir = tempDir()
    const holder = await startAgentProcess(dir)
    const response = await fetch(holder.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { role: 'user', messageId: 'm', parts: [{ kind: 'text', text: 'hello' }] } },
      }),
    })
    const task = ((await response.json()) as any).result
    await holder.kill()
    expect(lockHolder(dir).pid).toBe(holder.pid)

    const store = open(dir)
    expect(store.get(task.id)?.status.state).toBe('completed')
    expect(lockHolder(dir).pid).toBe(process.pid)
  })

  it.skipIf(!existsSync('/proc/self/stat'))(
    'takes over a lock whose pid now belongs to another process (a container restarted, a reboot): its start time differs',
    () => {
      const dir = tempDir()
      // A live process that is not this one, with another start time than the one the lock says.
      writeFileSync(
        join(dir, 'lock'),
        JSON.stringify({ pid: process.ppid, started: '1', token: 'left-by-an-earlier-process' }),
      )
      open(dir)
      expect(lockHolder(dir).pid).toBe(process.pid)
    },
  )

  it('refuses a lock file still being written, and takes over one left empty by a process that died before writing it', () => {
    const dir = tempDir()
    const lock = join(dir, 'lock')
    writeFileSync(lock, '')
    expect(() => createFileStore({ dir })).toThrow(`Task store: ${dir} is being opened by another server process`)
    const aMinuteAgo = new Date(Date.now() - 60_000)
    utimesSync(lock, aMinuteAgo, aMinuteAgo)
    open(dir)
    expect(lockHolder(dir).pid).toBe(process.pid)
  })

  it('lets the directory go on close: the lock file is removed and another process opens the directory', async () => {
    const dir = tempDir()
    const store = createFileStore({ dir })
    expect(lockHolder(dir).pid).toBe(process.pid)
    await store.close()
    expect(existsSync(join(dir, 'lock'))).toBe(false)
    const next = await startAgentProcess(dir)
    expect(lockHolder(dir).pid).toBe(next.pid)
  })
})
