import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { rpc } from '../_rpc.ts'
import { send } from '../_served-project.ts'
import { a2aBin, freePort, makeAgentProject, runA2a, runtimeDir, type StartedA2a, startA2a } from '../_support.ts'

/**
 * `a2a dev` keeps tasks where `A2A_STORE` says, as `a2a start` does: memory when unset, else a file, Redis or
 * PostgreSQL store, named on a start-up line without its password. The inspector's API reads that store (tasks
 * another instance made before dev started too), tasks outlive a restart of dev on a durable store, a bad value
 * stops the start in one line, and the store is closed when dev stops.
 */

/** A loaded 2-core machine can take seconds for what takes milliseconds here: deadlines are tens of seconds. */
const DEADLINE_MS = 30_000
/** A test that starts a2a dev twice (and another instance): each start may take seconds on a loaded machine. */
const RESTARTS_MS = 90_000

const AGENT = `import { defineAgent } from 'a2a-runtime'

export default defineAgent({
  card: { name: 'Dev Store Fixture', description: 'Echoes each message, for the a2a dev store tests', skills: [{ id: 'echo', name: 'Echo', description: 'Echoes the text', tags: ['test'], examples: ['hello'] }] },
  async execute(ctx, task) {
    task.artifact('Echo: ' + ctx.text)
    task.complete()
  },
})
`
/** An agent that does not load (a syntax error): dev serves 503 and keeps running. */
const BROKEN_AGENT = `${AGENT.trimEnd()} +\n`

const projects = new Set<string>()
const children = new Set<ChildProcess>()
let instance: StartedA2a | undefined

beforeAll(() => {
  const distIndex = join(runtimeDir, 'dist/index.js')
  if (!existsSync(distIndex)) throw new Error(`${distIndex} is missing: run \`npm run build\` (npm test does) first.`)
})

afterEach(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
  }
  children.clear()
  await instance?.dispose()
  instance = undefined
  for (const project of projects) rmSync(project, { recursive: true, force: true })
  projects.clear()
})

/** The caller's environment without a store setting of its own (the test's shell may have one). */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { A2A_STORE: _store, ...rest } = process.env
  return { ...rest, HOST: '127.0.0.1', ...extra }
}

function newProject(source = AGENT): string {
  const project = makeAgentProject('a2a-dev-store-', source)
  projects.add(project)
  return project
}

/** A name no other test uses (a schema, a key prefix), so this file's tasks are its own. */
const freshName = () => `dev_${Math.random().toString(36).slice(2, 10)}`

/** A shared store's URL as A2A_STORE holds it, as the banner shows it, and the secret it must not show. */
interface SharedStore {
  store: string
  shown: string
  secret?: string
}

const SHARED_STORES: Array<[string, () => SharedStore]> = [
  [
    'PostgreSQL',
    () => {
      const url = inject('postgresUrl')
      if (!url) throw new Error('PostgreSQL is not installed (Debian: apt-get install postgresql; .ci/run installs it)')
      const given = new URL(url)
      given.searchParams.set('schema', freshName())
      const shown = given.href
      // The run's cluster trusts loopback: a password in the URL is never asked for, so it is there to be hidden,
      // in the user part and in the query (libpq takes it there too).
      given.password = 'never-shown-secret'
      given.searchParams.set('password', 'never-shown-secret')
      return { store: given.href, shown, secret: 'never-shown' }
    },
  ],
  [
    'Redis',
    () => {
      const url = inject('redisUrl')
      if (!url) throw new Error('redis-server is not installed (Debian: apt-get install redis-server)')
      const given = new URL(url)
      given.searchParams.set('prefix', `${freshName()}:`)
      return { store: given.href, shown: given.href }
    },
  ],
]

interface DevServer {
  url: string
  output(): string
  /** Ctrl-C, then the exit status once it is gone. */
  stop(): Promise<number | null>
}

/** `a2a dev` on `project`, once it has said where it serves and where it keeps tasks. */
async function startDev(project: string, env: Record<string, string> = {}): Promise<DevServer> {
  const port = await freePort()
  const child = spawn(process.execPath, [a2aBin, 'dev'], {
    cwd: project,
    env: cleanEnv({ PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const deadline = Date.now() + DEADLINE_MS
  while (!/Tasks kept in .*\n/.test(output)) {
    if (child.exitCode !== null) throw new Error(`a2a dev exited with ${child.exitCode}: ${output}`)
    if (Date.now() > deadline)
      throw new Error(`a2a dev said no "Tasks kept in" line within ${DEADLINE_MS} ms: ${output}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return {
    url: `http://127.0.0.1:${port}/`,
    output: () => output,
    stop: async () => {
      process.kill(child.pid!, 'SIGINT')
      return exited
    },
  }
}

/** The line of the banner that says where tasks are kept. */
const storeLine = (dev: DevServer) => /^.*Tasks kept in .*$/m.exec(dev.output())?.[0] ?? ''

/** Sends `text` to the agent; the task it answers with, completed. */
async function sendTask(url: string, text: string): Promise<{ id: string }> {
  const answer = await send(url, text)
  expect(answer.body.error).toBeUndefined()
  expect(answer.body.result.status.state).toBe('completed')
  return answer.body.result
}

interface TaskLine {
  id: string
  state: string
  title: string
}

/** The inspector's task list (the page's first page of it). */
async function listed(dev: DevServer): Promise<TaskLine[]> {
  const response = await fetch(new URL('__a2a/api/tasks', dev.url))
  expect(response.status).toBe(200)
  return ((await response.json()) as { tasks: TaskLine[] }).tasks
}

/** Every file under `dir`, relative to it (links not followed: node_modules is one). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort()
}

/**
 * Reads the inspector's live channel until a `task` event names `taskId` in `state`, while `act` runs; the data of
 * that event.
 */
async function liveTaskEvent(dev: DevServer, act: () => Promise<{ id: string }>, state: string) {
  const controller = new AbortController()
  const response = await fetch(new URL('__a2a/events', dev.url), { signal: controller.signal })
  expect(response.status).toBe(200)
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  // The channel's first event (the hello) says it is open: a task made after it is reported on it.
  while (!text.includes('\n\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the live channel ended: ${text}`)
    text += value
  }
  const task = await act()
  const deadline = Date.now() + DEADLINE_MS
  try {
    for (;;) {
      const event = text
        .split('\n\n')
        .filter((block) => block.includes('event: task'))
        .map((block) => JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as TaskLine)
        .find((line) => line.id === task.id && line.state === state)
      if (event) return event
      if (Date.now() > deadline) throw new Error(`no live "task" event for ${task.id} (${state}): ${text}`)
      const { value, done } = await reader.read()
      if (done) throw new Error(`the live channel ended: ${text}`)
      text += value
    }
  } finally {
    controller.abort()
  }
}

describe('a2a dev on the store A2A_STORE names', () => {
  it.each(SHARED_STORES)(
    '%s: lists tasks made before it started, its own survive a restart and are shared; no password shown',
    async (_, storeUrl) => {
      const { store, shown, secret } = storeUrl()

      // Another instance of the agent on the same store, as a team's staging server would be.
      instance = await startA2a('a2a-dev-store-start-', AGENT, cleanEnv({ PORT: '0', A2A_STORE: store }))
      const before = await sendTask(instance.url, 'made before dev started')

      const project = newProject()
      let dev = await startDev(project, { A2A_STORE: store })
      expect(storeLine(dev)).toContain(`Tasks kept in ${shown} (A2A_STORE)`)
      if (secret) expect(dev.output()).not.toContain(secret)
      expect((await listed(dev)).map((task) => task.id)).toContain(before.id)

      // The inspector hears of dev's own task as it changes, and reads its line and event times back.
      const live = await liveTaskEvent(dev, () => sendTask(dev.url, 'made under dev'), 'completed')
      expect(live.title).toBe('made under dev')
      const made = live.id
      const line = await fetch(new URL(`__a2a/api/tasks/${made}`, dev.url))
      expect(line.status).toBe(200)
      expect(await line.json()).toMatchObject({ id: made, state: 'completed', title: 'made under dev' })
      expect((await fetch(new URL(`__a2a/api/tasks/${made}/times`, dev.url))).status).toBe(200)
      // The other instance reads the task dev made: they share the store.
      const read = await rpc(instance.url, 'tasks/get', { id: made })
      expect(read.body.result).toMatchObject({ id: made, status: { state: 'completed' } })

      expect(await dev.stop()).toBe(0)
      dev = await startDev(project, { A2A_STORE: store })
      const again = (await listed(dev)).map((task) => task.id)
      expect(again).toContain(made)
      expect(again).toContain(before.id)
      // The timeline's replay of a task from before the restart: its events, read back from the store.
      const replayed = await fetch(dev.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'last-event-id': '0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/resubscribe', params: { id: made } }),
      })
      expect(await replayed.text()).toContain('Echo: made under dev')
      expect(await dev.stop()).toBe(0)
    },
    RESTARTS_MS,
  )

  it(
    'file: a task sent is listed, and still after dev stops and starts again; the store is closed at the stop',
    async () => {
      const project = newProject()
      // The folder .env.example suggests, where dev also writes its address file.
      let dev = await startDev(project, { A2A_STORE: 'file:./.a2a' })
      expect(storeLine(dev)).toMatch(/Tasks kept in file:\.\/\.a2a \(A2A_STORE\)$/)
      const task = await sendTask(dev.url, 'kept on disk')
      expect(await listed(dev)).toEqual([expect.objectContaining({ id: task.id, state: 'completed' })])
      expect(await dev.stop()).toBe(0)
      // The store's directory lock goes with the store's close.
      expect(existsSync(join(project, '.a2a/lock'))).toBe(false)

      dev = await startDev(project, { A2A_STORE: 'file:./.a2a' })
      expect(await listed(dev)).toEqual([expect.objectContaining({ id: task.id, title: 'kept on disk' })])
      expect(await dev.stop()).toBe(0)
    },
    RESTARTS_MS,
  )

  it('file from .env: the store is closed at the stop even when the agent never loaded', async () => {
    const project = newProject(BROKEN_AGENT)
    writeFileSync(join(project, '.env'), 'A2A_STORE=file:./tasks\n')
    const dev = await startDev(project)
    expect(dev.output()).toContain('The agent failed to load')
    expect(storeLine(dev)).toContain('Tasks kept in file:./tasks (A2A_STORE)')
    expect(existsSync(join(project, 'tasks/lock'))).toBe(true)
    expect(await dev.stop()).toBe(0)
    expect(existsSync(join(project, 'tasks/lock'))).toBe(false)
  })

  it(
    'unset: tasks are kept in memory, nothing is written to the project, and a restart starts with none',
    async () => {
      const project = newProject()
      const files = filesUnder(project)
      let dev = await startDev(project)
      expect(storeLine(dev)).toContain('Tasks kept in memory: they go when a2a dev stops')
      const task = await sendTask(dev.url, 'kept in memory')
      expect((await listed(dev)).map((line) => line.id)).toEqual([task.id])
      expect(await dev.stop()).toBe(0)
      // Only what the project had (the address file dev writes while it runs is gone with it).
      expect(filesUnder(project)).toEqual(files)

      dev = await startDev(project)
      expect(await listed(dev)).toEqual([])
      expect(await dev.stop()).toBe(0)
    },
    RESTARTS_MS,
  )

  it('A2A_STORE changed in .env while dev runs: said to take effect at the next start; tasks stay put', async () => {
    const project = newProject()
    const dev = await startDev(project)
    const task = await sendTask(dev.url, 'before the save')
    writeFileSync(join(project, '.env'), 'A2A_STORE=file:./tasks\n')
    await expect
      .poll(dev.output, { timeout: DEADLINE_MS })
      .toContain('.env: A2A_STORE takes effect at the next start of a2a dev; tasks stay in memory until then')
    expect((await listed(dev)).map((line) => line.id)).toEqual([task.id])
    expect(existsSync(join(project, 'tasks'))).toBe(false)
    expect(await dev.stop()).toBe(0)
  })
})

describe('a2a dev with a bad A2A_STORE', () => {
  const running = new Set<ChildProcess>()
  afterEach(() => {
    for (const child of running) if (child.exitCode === null) process.kill(child.pid!, 'SIGKILL')
    running.clear()
  })

  it.each([
    ['an unknown form', 'mongodb://db/tasks', /^a2a: A2A_STORE must be "memory", .*\(got "mongodb:\/\/db\/tasks"\)$/],
    ['a bad option of the PostgreSQL form', 'postgres://db/tasks?leaseMs=soon', /^a2a: A2A_STORE: leaseMs must be/],
    ['a file store without its directory', 'file:', /^a2a: A2A_STORE: "file:" needs a directory/],
  ])(
    '%s stops the start with one line, from the environment or from .env',
    async (_, setting, line) => {
      for (const where of ['environment', '.env'] as const) {
        const project = newProject()
        if (where === '.env') writeFileSync(join(project, '.env'), `A2A_STORE=${setting}\n`)
        const env = cleanEnv({ PORT: String(await freePort()), ...(where === 'environment' && { A2A_STORE: setting }) })
        const result = await runA2a(['dev'], { cwd: project, env, running })
        expect(result.code, `${where}: ${result.stderr}`).toBe(1)
        expect(result.stderr.trimEnd().split('\n'), where).toEqual([expect.stringMatching(line)])
        expect(result.stdout).not.toContain('Dev server at')
      }
    },
    RESTARTS_MS,
  )

  it('a PostgreSQL schema left for a2a store migrate (migrate=false) stops the start with one line naming it', async () => {
    const url = inject('postgresUrl')
    if (!url) throw new Error('PostgreSQL is not installed (Debian: apt-get install postgresql; .ci/run installs it)')
    const store = new URL(url)
    store.searchParams.set('schema', freshName())
    store.searchParams.set('migrate', 'false')
    const env = cleanEnv({ PORT: String(await freePort()), A2A_STORE: store.href })
    const result = await runA2a(['dev'], { cwd: newProject(), env, running })
    expect(result.code, result.stderr).toBe(1)
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^a2a: The PostgreSQL schema "dev_\w+" is at version 0, .*`a2a store migrate`/),
    ])
    expect(result.stdout).not.toContain('Dev server at')
  })

  it("answers the inspector's task list with a 503 and Retry-After while the PostgreSQL store is out of reach", async () => {
    // Nothing listens there: dev starts anyway (an unreachable database is not a schema it cannot use).
    const store = `postgres://a2a@127.0.0.1:${await freePort()}/tasks?timeoutMs=1000`
    const dev = await startDev(newProject(), { A2A_STORE: store })
    const response = await fetch(new URL('__a2a/api/tasks', dev.url))
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('1')
    expect(((await response.json()) as { error: string }).error).toMatch(/^the task store failed: .*PostgreSQL/)
    expect(await dev.stop()).toBe(0)
  })
})
