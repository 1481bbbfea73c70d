import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { freePort, makeAgentProject, runA2a } from '../_support.ts'
import { startReceiver } from '../runtime/_webhook.ts'

const runtimeDir = fileURLToPath(new URL('../../runtime', import.meta.url))
const a2aBin = join(runtimeDir, 'bin/a2a.mjs')

/**
 * An agent whose answer, delay and card name the test rewrites between saves. With `gate`, a message "long"
 * runs until that file exists.
 */
const agentSource = ({
  answer = 'v1',
  delayMs = 0,
  name = 'Dev Fixture',
  broken = false,
  push = false,
  gate = '',
} = {}) => `import { existsSync } from 'node:fs'
import { defineAgent } from 'a2a-runtime'

const prefix: string = process.env.PREFIX ?? ''

export default defineAgent({
  card: { name: ${JSON.stringify(name)}, description: 'Answers with its version, for reload tests',${push ? ' capabilities: { pushNotifications: true },' : ''} skills: [{ id: 'v', name: 'Version', description: 'Says the version', tags: ['test'], examples: ['which?'] }] },
  async execute(ctx, task) {
    while (${JSON.stringify(gate)} && ctx.text === 'long' && !existsSync(${JSON.stringify(gate)})) await new Promise((resolve) => setTimeout(resolve, 20))
    await new Promise((resolve) => setTimeout(resolve, ${delayMs}))
    task.artifact(prefix + ${JSON.stringify(answer)})
    task.complete()
  }${broken ? ' +' : ''},
})
`

let project: string
let child: ChildProcess | undefined

beforeEach(() => {
  project = makeAgentProject('a2a-dev-', agentSource())
})

afterEach(() => {
  if (child?.exitCode === null) child.kill('SIGKILL')
  child = undefined
  rmSync(project, { recursive: true, force: true })
})

async function startDev(env: Record<string, string> = {}) {
  const port = await freePort()
  child = spawn(process.execPath, [a2aBin, 'dev'], {
    cwd: project,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const url = `http://127.0.0.1:${port}/`
  await expect.poll(() => output, { timeout: 10_000 }).toContain('Dev server at')
  return { url, output: () => output }
}

async function send(url: string, text = 'which?', extra: Record<string, unknown> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { role: 'user', messageId: `m${Math.random()}`, parts: [{ kind: 'text', text }] }, ...extra },
    }),
  })
  return {
    status: response.status,
    body: (await response.json()) as { result?: any; error?: { code: number; message: string } },
  }
}

const answer = async (url: string) => (await send(url)).body.result?.artifacts[0]?.parts[0]?.text

/** Writes the agent as an editor that saves by rename does: a new file, then renamed over the old one. */
function saveByRename(source: string) {
  const temporary = join(project, 'src/.agent.ts.swp')
  writeFileSync(temporary, source)
  renameSync(temporary, join(project, 'src/agent.ts'))
}

describe('a2a dev', () => {
  // How fast is a benchmark figure (README); a test only proves that the save is served.
  it('serves a saved change on the same port', async () => {
    const { url } = await startDev()
    expect(await answer(url)).toBe('v1')
    const card = await (await fetch(`${url}.well-known/agent.json`)).json()
    expect(card.url).toBe(url)

    writeFileSync(join(project, 'src/agent.ts'), agentSource({ answer: 'v2', name: 'Renamed Fixture' }))
    await expect.poll(() => answer(url), { interval: 5, timeout: 8000 }).toBe('v2')
    expect((await (await fetch(`${url}.well-known/agent.json`)).json()).name).toBe('Renamed Fixture')
  })

  it('sees saves made by rename, again and again', async () => {
    const { url, output } = await startDev()
    for (const version of ['r1', 'r2', 'r3']) {
      saveByRename(agentSource({ answer: version }))
      await expect.poll(() => answer(url), { interval: 10, timeout: 8000 }).toBe(version)
    }
    expect(output()).toMatch(/src\/agent\.ts changed/)
  })

  it('answers a JSON-RPC error naming the file, line and cause while the code is broken, then recovers on the next good save', async () => {
    const { url, output } = await startDev()
    writeFileSync(join(project, 'src/agent.ts'), agentSource({ broken: true }))
    await expect.poll(async () => (await send(url)).status, { interval: 10, timeout: 8000 }).toBe(503)
    const broken = await send(url)
    expect(broken.body.error!.code).toBe(-32603)
    expect(broken.body.error!.message).toMatch(/src\/agent\.ts:\d+:\d+ .*Error/)
    const cardResponse = await fetch(`${url}.well-known/agent.json`)
    expect(cardResponse.status).toBe(503)
    expect(cardResponse.headers.get('content-type')).toBe('application/json')
    expect((await cardResponse.json()).error.message).toMatch(/src\/agent\.ts:\d+/)
    expect(output()).toMatch(/failed to load: src\/agent\.ts:\d+:\d+/)

    writeFileSync(join(project, 'src/agent.ts'), agentSource({ answer: 'fixed' }))
    await expect.poll(() => answer(url), { interval: 10, timeout: 8000 }).toBe('fixed')
  })

  it('names the file and line of a broken save also when the project path holds a space and a non-ASCII letter', async () => {
    rmSync(project, { recursive: true, force: true })
    project = makeAgentProject('a2a dev é-', agentSource())
    const { url } = await startDev()
    writeFileSync(join(project, 'src/agent.ts'), agentSource({ broken: true }))
    await expect
      .poll(async () => (await send(url)).body.error?.message ?? '', { interval: 10, timeout: 8000 })
      .toMatch(/^The agent failed to load: src\/agent\.ts:\d+:\d+ .*Error/)
  })

  it('keeps a module that throws at import from closing the port', async () => {
    const { url } = await startDev()
    writeFileSync(join(project, 'src/agent.ts'), "throw new Error('config missing at import')\n")
    await expect
      .poll(async () => (await send(url)).body.error?.message ?? '', { interval: 10, timeout: 8000 })
      .toMatch(/src\/agent\.ts:1:\d+ Error: config missing at import/)
    writeFileSync(join(project, 'src/agent.ts'), agentSource({ answer: 'back' }))
    await expect.poll(() => answer(url), { interval: 10, timeout: 8000 }).toBe('back')
  })

  it('lets a task running during a reload finish, and still finds tasks made before it', async () => {
    const gate = join(project, 'node_modules/.release-long-task')
    writeFileSync(join(project, 'src/agent.ts'), agentSource({ answer: 'slow-v1', gate }))
    const { url } = await startDev()
    const finished = (await send(url)).body.result
    const running = send(url, 'long', { configuration: { blocking: false } })
    const runningTask = (await running).body.result
    expect(runningTask.status.state).toBe('working')

    writeFileSync(join(project, 'src/agent.ts'), agentSource({ answer: 'fast-v2' }))
    await expect.poll(() => answer(url), { interval: 10, timeout: 8000 }).toBe('fast-v2')

    const get = async (id: string) =>
      (
        (await (
          await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id } }),
          })
        ).json()) as { result: any }
      ).result
    expect((await get(finished.id)).artifacts[0].parts[0].text).toBe('slow-v1')
    // Held until now, so it certainly ran across the reload.
    expect((await get(runningTask.id)).status.state).toBe('working')
    writeFileSync(gate, '')
    await expect.poll(async () => (await get(runningTask.id)).status.state, { timeout: 8000 }).toBe('completed')
    expect((await get(runningTask.id)).artifacts[0].parts[0].text).toBe('slow-v1')
  })

  it('lets a webhook on this machine receive push notifications, unless the environment says otherwise', async () => {
    writeFileSync(join(project, 'src/agent.ts'), agentSource({ push: true }))
    const receiver = await startReceiver()
    const { url } = await startDev()
    const sent = await send(url, 'which?', { configuration: { pushNotificationConfig: { url: receiver.url } } })
    expect(sent.body.error).toBeUndefined()
    expect(sent.body.result.status.state).toBe('completed')
    await expect.poll(() => receiver.delivered.at(-1)?.body.status.state, { timeout: 8000 }).toBe('completed')
    child!.kill('SIGKILL')

    const strict = await startDev({ A2A_PUSH_ALLOW_HTTP: 'false' })
    const refused = await send(strict.url, 'which?', {
      configuration: { pushNotificationConfig: { url: receiver.url } },
    })
    expect(refused.body.error?.message).toMatch(/http: webhooks are refused/)
    child!.kill('SIGKILL')

    // A blank line in the project's .env says "nothing", not "the default": the dev allowance is off too.
    writeFileSync(join(project, '.env'), 'A2A_PUSH_ALLOW_HTTP=\n')
    const blank = await startDev()
    const refusedToo = await send(blank.url, 'which?', {
      configuration: { pushNotificationConfig: { url: receiver.url } },
    })
    expect(refusedToo.body.error?.message).toMatch(/http: webhooks are refused/)
  })

  it('applies .env changes on save', async () => {
    writeFileSync(join(project, '.env'), 'PREFIX=one:\n')
    const { url, output } = await startDev()
    expect(await answer(url)).toBe('one:v1')
    writeFileSync(join(project, '.env'), 'PREFIX=two:\n')
    await expect.poll(() => answer(url), { interval: 10, timeout: 8000 }).toBe('two:v1')
    expect(output()).toMatch(/\.env: PREFIX changed/)
  })

  it('falls back to a free port when PORT is taken, and the card follows the real port', async () => {
    const blocker = createServer()
    const taken = await new Promise<number>((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)),
    )
    try {
      child = spawn(process.execPath, [a2aBin, 'dev'], {
        cwd: project,
        env: { ...process.env, PORT: String(taken), HOST: '127.0.0.1' },
      })
      let output = ''
      child.stdout!.on('data', (chunk) => (output += chunk))
      child.stderr!.on('data', (chunk) => (output += chunk))
      await expect.poll(() => /Dev server at (\S+)/.exec(output)?.[1], { timeout: 10_000 }).toBeTruthy()
      const url = /Dev server at (\S+)/.exec(output)![1]!
      expect(new URL(url).port).not.toBe(String(taken))
      // The next free one (README), said in one line of ours, not a dependency's.
      expect(Number(new URL(url).port)).toBeGreaterThan(taken)
      expect(output).toContain(`Port ${taken} is busy; using ${new URL(url).port}\n`)
      expect(output).not.toContain('get-port')
      expect((await (await fetch(`${url}.well-known/agent.json`)).json()).url).toBe(url)
    } finally {
      blocker.close()
    }
  })

  it('reloads helper modules the agent imports: TypeScript and JSON', async () => {
    writeFileSync(join(project, 'src/data.json'), '{"answer":"j1"}')
    writeFileSync(
      join(project, 'src/helper.ts'),
      "import data from './data.json'\nexport const answer = (): string => data.answer + '-t1'\n",
    )
    writeFileSync(
      join(project, 'src/agent.ts'),
      agentSource()
        .replace(
          "import { defineAgent } from 'a2a-runtime'",
          "import { defineAgent } from 'a2a-runtime'\nimport { answer } from './helper.ts'",
        )
        .replace('prefix + "v1"', 'answer()'),
    )
    const { url } = await startDev()
    expect(await answer(url)).toBe('j1-t1')
    writeFileSync(join(project, 'src/data.json'), '{"answer":"j2"}')
    await expect.poll(() => answer(url), { interval: 10, timeout: 8000 }).toBe('j2-t1')
    writeFileSync(
      join(project, 'src/helper.ts'),
      "import data from './data.json'\nexport const answer = (): string => data.answer + '-t2'\n",
    )
    await expect.poll(() => answer(url), { interval: 10, timeout: 8000 }).toBe('j2-t2')
  })

  it('keeps serving when agent code leaves a promise rejected, naming where', async () => {
    const { url, output } = await startDev()
    writeFileSync(
      join(project, 'src/agent.ts'),
      agentSource({ answer: 'after-rejection' }).replace(
        'const prefix',
        "void Promise.reject(new Error('nobody awaited me'))\nconst prefix",
      ),
    )
    await expect.poll(() => answer(url), { interval: 10, timeout: 8000 }).toBe('after-rejection')
    await expect
      .poll(() => output(), { timeout: 8000 })
      .toMatch(/Unhandled error in the agent's code: src\/agent\.ts:\d+:\d+ Error: nobody awaited me/)
    writeFileSync(join(project, 'src/agent.ts'), agentSource({ answer: 'still-here' }))
    await expect.poll(() => answer(url), { interval: 10, timeout: 8000 }).toBe('still-here')
  })

  it('reads a .env that is not a file as no .env, without stopping', async () => {
    mkdirSync(join(project, '.env'))
    const { url } = await startDev()
    expect(await answer(url)).toBe('v1')
  })

  it('checks the card on every reload and warns about what it finds', async () => {
    const { output } = await startDev()
    const before = output().length
    writeFileSync(join(project, 'src/agent.ts'), agentSource().replace("examples: ['which?']", 'examples: []'))
    await expect
      .poll(() => output().slice(before), { timeout: 8000 })
      .toMatch(/card skills\[0\]\.examples: the skill has no examples/)
  })

  it('on Ctrl-C with a stream open says what it waits for, and a second Ctrl-C stops at once', async () => {
    writeFileSync(join(project, 'src/agent.ts'), agentSource({ answer: 'late', delayMs: 60_000 }))
    const { url, output } = await startDev()
    const stream = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/stream',
        params: { message: { role: 'user', messageId: 'm-stream', parts: [{ kind: 'text', text: 'which?' }] } },
      }),
    })
    const reader = stream.body!.getReader()
    await reader.read() // the task runs and the stream is open
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)))
    process.kill(child!.pid!, 'SIGINT')
    await expect
      .poll(() => output(), { timeout: 10_000 })
      .toMatch(/Waiting up to 10 s for running tasks and 1 open request\(s\) to finish; press Ctrl-C again to stop now/)
    process.kill(child!.pid!, 'SIGINT')
    const stoppedWithin = (ms: number) =>
      Promise.race([
        exited,
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error(`still running ${ms} ms after the second Ctrl-C: ${output()}`)), ms),
        ),
      ])
    // The task would hold the exit for the 10 s grace; the second Ctrl-C must not wait for it.
    expect(await stoppedWithin(5000)).toBe(130)
    expect(existsSync(join(project, '.a2a/dev.json'))).toBe(false)
    await reader.cancel().catch(() => {})
  })

  it('on one Ctrl-C stops even when a request never finishes: once the tasks are settled its connection is cut', {
    timeout: 45_000,
  }, async () => {
    const { url, output } = await startDev()
    // A request whose body never ends: "100 Continue" shows the server has handed it to the handler.
    const socket = connect(Number(new URL(url).port), '127.0.0.1')
    socket.on('error', () => {})
    let answered = ''
    socket.on('data', (chunk) => (answered += chunk))
    socket.write(
      'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n',
    )
    await expect.poll(() => answered, { timeout: 10_000 }).toContain('100 Continue')
    socket.write('{"jsonrpc":"2.0",')
    try {
      const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)))
      process.kill(child!.pid!, 'SIGINT')
      await expect
        .poll(() => output(), { timeout: 10_000 })
        .toMatch(/Waiting up to 10 s for running tasks and 1 open request\(s\) to finish/)
      // The promise is "up to 10 s"; the rest is slack for a loaded machine. Without the cut it waits for good.
      const exitCode = await Promise.race([
        exited,
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error(`still running 30 s after one Ctrl-C: ${output()}`)), 30_000),
        ),
      ])
      expect(exitCode).toBe(0)
      expect(existsSync(join(project, '.a2a/dev.json'))).toBe(false)
    } finally {
      socket.destroy()
    }
  })

  it('refuses a PORT that is not a port in one line naming it and the value as given, and exits 1, as a2a start does', async () => {
    const running = new Set<ChildProcess>()
    const env = { ...process.env, PORT: 'abc', HOST: '127.0.0.1' }
    const dev = await runA2a(['dev'], { cwd: project, env, running })
    expect(dev.stderr).toBe('a2a: --port (PORT) must be a whole number from 0 to 65535 (got "abc")\n')
    expect(dev.code).toBe(1)
    const start = await runA2a(['start'], { cwd: project, env, running })
    expect(start.stderr).toBe(dev.stderr)
  })

  it('outside a project exits 1 with the line a2a start prints', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'a2a-dev-empty-'))
    try {
      const running = new Set<ChildProcess>()
      const env = { ...process.env, PORT: '0', HOST: '127.0.0.1' }
      const dev = await runA2a(['dev'], { cwd: empty, env, running })
      const start = await runA2a(['start'], { cwd: empty, env, running })
      expect(dev.code).toBe(1)
      expect(dev.stderr).toBe(
        `a2a: Cannot find the agent module src/agent.ts in ${empty} (pass its path as an argument)\n`,
      )
      expect(dev.stderr).toBe(start.stderr)
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
  })

  it('ignores logs and files under node_modules', async () => {
    const { output } = await startDev()
    const before = output().length
    writeFileSync(join(project, 'server.log'), 'noise\n')
    writeFileSync(join(project, 'node_modules/noise.js'), 'noise\n')
    // A relevant save after the noise: once it is reported, the noise would have been too.
    writeFileSync(join(project, 'src/after-noise.ts'), 'export {}\n')
    await expect.poll(() => output().slice(before), { timeout: 8000 }).toMatch(/src\/after-noise\.ts changed/)
    expect(output().slice(before)).not.toMatch(/server\.log|noise\.js/)
  })
})
