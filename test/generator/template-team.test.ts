import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs'
import { createServer, request } from 'node:http'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../_support.ts'
import { buildLikeDocker, readDockerfile, startCmd } from './e2e-dockerfile.ts'
import { readmeBlocks, variablesRead, variablesSet } from './e2e-readme.ts'
import { assertBuilt, parseJsonc, type Workspace, workspace } from './template-support.ts'

/**
 * The team template rendered by the generator, without an install: its node_modules is this repository's (the
 * built runtime, jiti, vitest, typescript). Its own tests run as a process in it, src/server.ts serves it as
 * `npm start` does, and its image (built into folders) as the Dockerfile's CMD, `a2a start`, does. The e2e suite
 * installs one and runs the same from the registry.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(repoRoot, 'generator/bin/create-a2a-agent.mjs')
const exec = promisify(execFile)
const SLOW = 60_000
/** Colour escapes, which vitest prints even into a pipe. */
const ANSI_ESCAPES = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g')

let space: Workspace
const running = new Set<ChildProcess>()

beforeAll(() => {
  assertBuilt()
  space = workspace('a2a-template-team-')
})

afterAll(() => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  space.remove()
})

async function generateLinked(dir: string, flags: string[]): Promise<string> {
  const project = await space.generate(dir, ['--template', 'team', ...flags])
  symlinkSync(join(repoRoot, 'node_modules'), join(project, 'node_modules'), 'dir')
  return project
}

/** A command in the project to its end: its exit code and what it printed. */
const runIn = (project: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env) =>
  exec(command, args, { cwd: project, env, timeout: 180_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, output: `${stdout}${stderr}` }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? 1,
      output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
    }),
  )

/** `a2a <args>` in the project, with PORT, HOST and WRITER_URL only as given: stopped by `stop()`. */
function serveWithA2a(project: string, args: string[], given: NodeJS.ProcessEnv) {
  const { HOST: _host, PORT: _port, WRITER_URL: _writer, ...env } = process.env
  const child = spawn(process.execPath, [join(repoRoot, 'runtime/bin/a2a.mjs'), ...args], {
    cwd: project,
    env: { ...env, A2A_LOG_LEVEL: 'warn', ...given },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    output: () => output,
    async stop() {
      child.kill('SIGTERM')
      await exited
      running.delete(child)
    },
  }
}

/** A message/send to the planner of the server at `base`: its task's state and the draft it answered with. */
async function askPlanner(base: string, text: string): Promise<{ state: string; draft: string }> {
  const answer = await fetch(`${base}planner`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text }] } },
    }),
  })
  const { result } = (await answer.json()) as {
    result: { status: { state: string; message?: { parts: Array<{ text: string }> } } } & {
      artifacts?: Array<{ parts: Array<{ text: string }> }>
    }
  }
  // A failed task's reason stands in for the draft, so a failure says why.
  const parts = result.artifacts?.[0]?.parts ?? result.status.message?.parts ?? []
  return { state: result.status.state, draft: parts.map((part) => part.text).join('') }
}

/**
 * A proxy to the server at `port` that holds back every streamed answer (the writer's stream to the planner) until
 * `release()`: the writer has made its task, and the planner has not heard its id yet.
 */
async function holdingProxy(port: number) {
  const held: Array<() => void> = []
  let holding = true
  const proxy = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.on('end', () => {
      const body = Buffer.concat(chunks)
      const { method, url: path, headers } = incoming
      const upstream = request({ host: '127.0.0.1', port, method, path, headers }, (answer) => {
        const pass = () => {
          outgoing.writeHead(answer.statusCode!, answer.headers)
          answer.pipe(outgoing)
        }
        if (holding && /SendStreamingMessage|message\/stream/.test(body.toString())) held.push(pass)
        else pass()
      })
      upstream.on('error', () => outgoing.destroy())
      upstream.end(body)
    })
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}/`,
    /** Streams held back so far. */
    held: () => held.length,
    release() {
      holding = false
      for (const pass of held.splice(0)) pass()
    },
    close: () => new Promise((resolve) => proxy.close(resolve)),
  }
}

/** A v1.0 JSON-RPC call to an agent of the server at `base`: its result. */
async function call(base: string, agent: string, method: string, params: object): Promise<any> {
  const answer = await fetch(`${base}${agent}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const { result, error } = (await answer.json()) as { result?: unknown; error?: unknown }
  if (error) throw new Error(`${method}: ${JSON.stringify(error)}`)
  return result
}

describe('team template', () => {
  it('renders a planner and a writer in src/agents/, both served by src/server.ts, with its own tests', async () => {
    const project = await space.generate('team-files', ['--template', 'team'])
    for (const path of ['src/agents/planner.ts', 'src/agents/writer.ts', 'src/server.ts', 'test/team.test.ts'])
      expect(existsSync(join(project, path)), path).toBe(true)
    // No one agent: neither the single agent's module nor its test (which would import it).
    expect(existsSync(join(project, 'src/agent.ts'))).toBe(false)
    expect(existsSync(join(project, 'test/agent.test.ts'))).toBe(false)
    const manifest = JSON.parse(space.read(project, 'package.json'))
    expect(manifest.scripts.start).toBe('node --import jiti/register src/server.ts')
    expect(manifest.dependencies.jiti).toBeDefined()
    // The planner reaches the writer only over A2A: through its card, never by importing it.
    const planner = space.read(project, 'src/agents/planner.ts')
    expect(planner).toMatch(/from 'a2a-runtime\/client'/)
    expect(planner).not.toMatch(/from '\.\/writer/)
    // The image starts what every Node project's does: a2a start, which serves src/agents/ when there is no agent.ts.
    const dockerfile = space.read(project, 'Dockerfile')
    expect(dockerfile).toContain('CMD ["node_modules/.bin/a2a", "start"]')
    // The root serves no card when several agents share the server: the image's health is /healthz.
    expect(dockerfile).toMatch(/HEALTHCHECK[\s\S]*\/healthz/)
    expect(dockerfile).not.toContain('agent.json')
    // The settings the team's own code reads are named in .env.example with the others.
    const example = space.read(project, '.env.example')
    for (const name of ['WRITER_URL', 'WRITER_CREDENTIAL']) expect(example).toMatch(new RegExp(`^# ${name}=`, 'm'))
  })

  it.each([
    ['bearer', ['--auth', 'bearer']],
    ['deno', ['--runtime', 'deno', '--auth', 'apikey']],
  ])('README (%s): its commands name scripts that exist and set every variable they read', async (name, flags) => {
    const project = await space.generate(`team-readme-${name}`, ['--template', 'team', ...flags])
    const manifest = JSON.parse(space.read(project, 'package.json')) as { scripts?: Record<string, string> }
    const tasks = existsSync(join(project, 'deno.json'))
      ? Object.keys(parseJsonc(space.read(project, 'deno.json')).tasks)
      : []
    for (const block of readmeBlocks(space.read(project, 'README.md'))) {
      const assigned = new Set<string>()
      for (const { line } of block) {
        for (const [, script] of line.matchAll(/\bnpm run ([\w:-]+)/g))
          expect(Object.keys(manifest.scripts ?? {}), line).toContain(script)
        for (const [, task] of line.matchAll(/\bdeno task ([\w:-]+)/g)) expect(tasks, line).toContain(task)
        for (const variable of variablesRead(line)) expect(assigned.has(variable), line).toBe(true)
        for (const variable of variablesSet(line)) assigned.add(variable)
      }
    }
  })

  it.each([
    ['bearer', 'A2A_BEARER_TOKEN'],
    ['apikey', 'A2A_API_KEY'],
  ])(".env (%s): the planner has its own credential, beside the clients' and never the first", async (auth, name) => {
    const project = await space.generate(`team-env-${auth}`, ['--template', 'team', '--auth', auth])
    const list = new RegExp(`^${name}=(.*)$`, 'm').exec(space.read(project, '.env'))?.[1] ?? ''
    const [client, planner, ...more] = list.split(',')
    expect(more).toEqual([])
    expect(client).toMatch(/^[\w-]{32}$/)
    expect(planner).toMatch(/^planner:[\w-]{32}$/)
    expect(planner!.slice('planner:'.length)).not.toBe(client)
  })

  it("deno task card checks both agents' cards", { timeout: 120_000 }, async () => {
    const project = await generateLinked('team-deno-card', ['--runtime', 'deno'])
    const deno = join(repoRoot, 'test-runtimes/node_modules/.bin/deno')
    const checked = await runIn(project, deno, ['task', 'card'])
    expect(checked.code, checked.output).toBe(0)
    expect(checked.output).toMatch(/src\/agents\/planner\.ts \(as served\): valid/)
    expect(checked.output).toMatch(/src\/agents\/writer\.ts \(as served\): valid/)
  })

  it.each([
    ['--runtime', 'workers'],
    ['--auth', 'oidc'],
    ['--deploy', 'agentcore'],
  ])('refuses --template team with %s %s in one line naming it', async (flag, value) => {
    const refused = await runIn(repoRoot, process.execPath, [
      bin,
      'refused',
      '--yes',
      '--no-install',
      '--no-git',
      '--template',
      'team',
      flag,
      value,
    ])
    expect(refused.code).toBe(2)
    expect(refused.output.trim()).toMatch(new RegExp(`^[^\\n]*${flag} ${value}[^\\n]*$`))
  })

  it.each([
    ['none', ['--auth', 'none'], 5],
    // With a credential, one more: a client reads none of the writer's tasks (the planner calls with its own).
    ['bearer', ['--auth', 'bearer'], 6],
    ['apikey, no streaming', ['--auth', 'apikey', '--no-streaming'], 5],
  ])(
    'its own tests pass and it type-checks (%s): the writer called over A2A, cancel passed on, a writer down',
    {
      timeout: 300_000,
    },
    async (name, flags, tests) => {
      const project = await generateLinked(`team-${name.replace(/\W+/g, '-')}`, flags as string[])
      const tested = await runIn(project, process.execPath, [join(repoRoot, 'node_modules/vitest/vitest.mjs'), 'run'])
      expect(tested.code, tested.output).toBe(0)
      // vitest colours its summary even in a pipe: the escapes go before it is read.
      expect(tested.output.replace(ANSI_ESCAPES, '')).toMatch(new RegExp(`Tests\\s+${tests} passed \\(${tests}\\)`))
      const typecheck = await runIn(project, process.execPath, [
        join(repoRoot, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '-p',
        '.',
      ])
      expect(typecheck.code, typecheck.output).toBe(0)
    },
  )

  it('a2a dev (npm run dev) with its port busy: the planner reaches its own writer where the server moved', {
    timeout: 120_000,
  }, async () => {
    const project = await generateLinked('team-dev', [])
    const port = await freePort()
    // Another server holds PORT and answers everything 503: a planner that called it would fail its task.
    const busy = createServer((_request, response) => response.writeHead(503).end())
    await new Promise<void>((resolve) => busy.listen(port, '127.0.0.1', resolve))
    const served = serveWithA2a(project, ['dev'], { PORT: String(port) })
    try {
      // Where a2a dev really listens, as it tells the project's commands.
      const devFile = join(project, '.a2a/dev.json')
      await expect.poll(() => existsSync(devFile), { timeout: SLOW }).toBe(true)
      const { url } = JSON.parse(readFileSync(devFile, 'utf8')) as { url: string }
      expect(new URL(url).port, served.output()).not.toBe(String(port))
      expect(await askPlanner(url, 'moved')).toEqual({ state: 'completed', draft: 'Draft: moved' })
    } finally {
      await served.stop()
      await new Promise((resolve) => busy.close(resolve))
    }
  })

  it('a2a start --port: the planner reaches its own writer on that port, not at PORT', {
    timeout: 120_000,
  }, async () => {
    const project = await generateLinked('team-start', [])
    const [port, elsewhere] = [await freePort(), await freePort()]
    // PORT names another server, answering everything 503; --port wins, for the server and for the planner.
    const busy = createServer((_request, response) => response.writeHead(503).end())
    await new Promise<void>((resolve) => busy.listen(elsewhere, '127.0.0.1', resolve))
    const served = serveWithA2a(project, ['start', '--port', String(port)], { PORT: String(elsewhere) })
    try {
      const url = `http://127.0.0.1:${port}/`
      await expect
        .poll(
          () =>
            fetch(`${url}healthz`).then(
              (r) => r.status,
              () => 0,
            ),
          { timeout: SLOW },
        )
        .toBe(200)
      expect(await askPlanner(url, 'flagged'), served.output()).toEqual({ state: 'completed', draft: 'Draft: flagged' })
    } finally {
      await served.stop()
      await new Promise((resolve) => busy.close(resolve))
    }
  })

  it("a cancel before the writer's first event reaches the planner still cancels the writer's task", {
    timeout: 120_000,
  }, async () => {
    const project = await generateLinked('team-cancel-race', [])
    const port = await freePort()
    const proxy = await holdingProxy(port)
    // The cards name the proxy as the agents' address: the planner's stream to the writer goes through it.
    const served = spawn(process.execPath, ['--import', 'jiti/register', 'src/server.ts'], {
      cwd: project,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', WRITER_URL: '', A2A_PUBLIC_URL: proxy.url },
      stdio: 'ignore',
    })
    running.add(served)
    const exited = new Promise<void>((resolve) => served.once('exit', () => resolve()))
    const base = `http://127.0.0.1:${port}/`
    try {
      await expect
        .poll(
          () =>
            fetch(`${base}healthz`).then(
              (r) => r.status,
              () => 0,
            ),
          { timeout: SLOW },
        )
        .toBe(200)
      // A long brief: the writer would take seconds to finish it, canceled or not.
      const brief = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ')
      const message = { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: brief }] }
      const { task } = await call(base, 'planner', 'SendMessage', {
        message,
        configuration: { returnImmediately: true },
      })
      // The writer has the brief and its task; the planner has not heard of it.
      await expect.poll(() => proxy.held(), { timeout: SLOW }).toBe(1)
      const writerTasks = async () => (await call(base, 'writer', 'ListTasks', { contextId: task.contextId })).tasks
      await expect.poll(async () => (await writerTasks()).length, { timeout: SLOW }).toBe(1)
      const canceled = await call(base, 'planner', 'CancelTask', { id: task.id })
      expect(canceled.status.state).toBe('TASK_STATE_CANCELED')
      proxy.release()
      // The writer's task ends, canceled: not left to write its draft for a task nobody waits on.
      const [written] = await writerTasks()
      const stateOf = async () => (await call(base, 'writer', 'GetTask', { id: written.id })).status.state
      await expect.poll(stateOf, { timeout: SLOW }).toMatch(/CANCELED|COMPLETED|FAILED/)
      expect(await stateOf()).toBe('TASK_STATE_CANCELED')
    } finally {
      served.kill('SIGTERM')
      await exited
      running.delete(served)
      await proxy.close()
    }
  })

  it('src/server.ts (npm start) serves both agents: the list, /healthz, the planner with the writer', {
    timeout: 120_000,
  }, async () => {
    const project = await generateLinked('team-served', [])
    const port = await freePort()
    const child = spawn(process.execPath, ['--import', 'jiti/register', 'src/server.ts'], {
      cwd: project,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', WRITER_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    running.add(child)
    let output = ''
    child.stdout!.on('data', (chunk) => (output += chunk))
    child.stderr!.on('data', (chunk) => (output += chunk))
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    const base = `http://127.0.0.1:${port}/`
    await expect
      .poll(
        () =>
          fetch(`${base}healthz`).then(
            (response) => response.status,
            () => 0,
          ),
        { timeout: SLOW },
      )
      .toBe(200)
    const list = (await (await fetch(`${base}.well-known/agents.json`)).json()) as { agents: Array<{ name: string }> }
    expect(list.agents.map((agent) => agent.name)).toEqual(['planner', 'writer'])
    const answer = await fetch(`${base}planner`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'ping' }] } },
      }),
    })
    const { result } = (await answer.json()) as {
      result: { status: { state: string }; artifacts: Array<{ parts: Array<{ text: string }> }> }
    }
    expect(result.status.state, output).toBe('completed')
    expect(result.artifacts[0]!.parts.map((part) => part.text).join('')).toBe('Draft: ping')
    // Every command of its README as pasted (the server's own aside), on this port in place of 3000.
    for (const block of readmeBlocks(space.read(project, 'README.md'))) {
      const script = block
        .filter((command) => command.kind === 'run')
        .map((command) => command.line.replaceAll('localhost:3000', `localhost:${port}`))
        .join('\n')
      if (!script) continue
      const ran = await runIn(project, 'bash', ['-e', '-o', 'pipefail', '-c', script])
      expect(ran.code, `${script}\n${ran.output}`).toBe(0)
      expect(ran.output, script).not.toMatch(/"error"/)
    }
    child.kill('SIGTERM')
    expect(await exited, output).toBe(0)
    running.delete(child)
  })

  it('its image, built into folders: the warm-up start ends on /healthz, the CMD serves both agents, HEALTHCHECK', {
    timeout: 240_000,
  }, async () => {
    const project = await generateLinked('team-image', [])
    const imageTmp = join(dirname(project), 'team-image-tmp')
    mkdirSync(imageTmp)
    const warmUps: number[] = []
    const built = await buildLikeDocker(
      project,
      readDockerfile(space.read(project, 'Dockerfile')),
      join(dirname(project), 'team-image-folders'),
      async (command, cwd, env) => {
        // The install stage: this repository's node_modules stand in for what npm ci would install (no network).
        if (/\bnpm ci\b/.test(command)) return symlinkSync(join(repoRoot, 'node_modules'), join(cwd, 'node_modules'))
        const started = performance.now()
        await exec('/bin/sh', ['-c', command], { cwd, env: { ...env, TMPDIR: imageTmp }, timeout: 120_000 })
        if (/\ba2a\b/.test(command)) warmUps.push(performance.now() - started)
      },
    )
    // The warm-up ran, and stopped once the server answered, not at its 30-second cap (the start takes seconds):
    // a wait for a line or a path that a folder of agents never gives would end only there.
    expect(warmUps).toHaveLength(1)
    expect(warmUps[0]).toBeLessThan(29_000)
    const cached = readdirSync(join(imageTmp, 'jiti'))
    expect(
      cached.some((file) => /planner/.test(file)),
      cached.join('\n'),
    ).toBe(true)

    // `docker run -p`: a free port in place of 3000, on loopback here (the image's HOST is 0.0.0.0).
    const port = await freePort()
    const child = startCmd(built, { PORT: String(port), HOST: '127.0.0.1', TMPDIR: imageTmp })
    running.add(child)
    let output = ''
    child.stdout!.on('data', (chunk) => (output += chunk))
    child.stderr!.on('data', (chunk) => (output += chunk))
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    const base = `http://127.0.0.1:${port}/`
    try {
      const healthz = () =>
        fetch(`${base}healthz`).then(
          (response) => response.status,
          () => 0,
        )
      await expect.poll(healthz, { timeout: SLOW }).toBe(200)
      // The planner finds its writer where a2a start listens (PORT and HOST), with no src/server.ts.
      expect(await askPlanner(base, 'boxed'), output).toEqual({ state: 'completed', draft: 'Draft: boxed' })
      const healthcheck = built.stage.steps.find((step) => step.keyword === 'HEALTHCHECK')!.shell!
      const checked = await runIn(built.dir, '/bin/sh', ['-c', healthcheck], { ...built.env, PORT: String(port) })
      expect(checked.code, checked.output).toBe(0)
    } finally {
      // SIGTERM, as `docker stop` sends it: both agents drain and the process exits cleanly.
      process.kill(-child.pid!, 'SIGTERM')
      expect(await exited, output).toBe(0)
      running.delete(child)
    }
  })
})
