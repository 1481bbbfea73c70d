import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Role, TaskState } from '@a2a-js/sdk'
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client'
import { A2AClient as A2AClientV03 } from 'a2a-sdk-v03/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultDisplayName, type TemplateName } from '../../generator/src/options.ts'
import { MODEL_TEMPLATES } from '../../generator/src/render.ts'
import { type StandInLlm, startStandInLlm } from '../../generator/templates/llm/test/llm-stand-in.ts'
import { startOidcIssuer, TEST_AUDIENCE } from '../_oidc-issuer.ts'
import { OTHER_PACKAGE_MANAGERS, packageManagersOnPath } from '../_package-managers.ts'
import { v1Message } from '../_sdk-v1.ts'
import { answerText, SLOW, send, startProject, untilCardAnswers } from '../_served-project.ts'
import { freePort } from '../_support.ts'
import { startReceiver } from '../runtime/_webhook.ts'
import { installScripts } from './_install-scripts.ts'
import { buildLikeDocker, readDockerfile, startCmd } from './e2e-dockerfile.ts'
import { readmeBlocks } from './e2e-readme.ts'

/**
 * Generated projects tested for real: generate from this clone with flags, let the generator install them,
 * then run each project's own typecheck and tests and serve it with `npm start` on a free port.
 */

const bin = fileURLToPath(new URL('../../generator/bin/create-a2a-agent.mjs', import.meta.url))
const exec = promisify(execFile)
const INSTALL_TIMEOUT = 180_000

let workspace: string
const running = new Set<ChildProcess>()

beforeAll(() => {
  workspace = mkdtempSync(join(realpathSync(tmpdir()), 'create-a2a-agent-e2e-'))
})

// Removing a dozen installed projects is heavy I/O: it runs without blocking the event loop and gets ten
// minutes, so a loaded machine slows the clean-up without failing the run.
afterAll(async () => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL')
  await rm(workspace, { recursive: true, force: true, maxRetries: 3 })
}, 600_000)

/** A git identity of the test's own and no repository above the workspace, so commits work on any machine. */
const gitEnv = {
  GIT_AUTHOR_NAME: 'E2E Test',
  GIT_AUTHOR_EMAIL: 'e2e@example.com',
  GIT_COMMITTER_NAME: 'E2E Test',
  GIT_COMMITTER_EMAIL: 'e2e@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
}

async function generate(dir: string, flags: string[], { git = false } = {}): Promise<string> {
  const { stdout } = await exec(
    process.execPath,
    [bin, dir, '--pm', 'npm', ...(git ? [] : ['--no-git']), '--json', ...flags],
    {
      cwd: workspace,
      timeout: INSTALL_TIMEOUT,
      env: {
        ...process.env,
        ...gitEnv,
        GIT_CEILING_DIRECTORIES: workspace,
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        npm_config_update_notifier: 'false',
      },
    },
  )
  const summary = JSON.parse(stdout.trim().split('\n').at(-1)!)
  expect(summary.installed).toBe(true)
  expect(summary.git).toBe(git ? 'committed' : 'skipped')
  return summary.dir as string
}

/**
 * Each install costs about 20 s, so a project is generated once (with git) and shared by the tests that need
 * it, whichever runs first.
 */
const shared = new Map<string, Promise<string>>()
const sharedProject = (dir: string, flags: string[]) => {
  if (!shared.has(dir)) shared.set(dir, generate(dir, flags, { git: true }))
  return shared.get(dir)!
}

/**
 * The first commit holds what the generator wrote, never `.env` (a credential, or the model's key to fill in),
 * which git ignores; `withEnv`: the project has one.
 */
async function expectCommittedWithoutEnv(project: string, withEnv: boolean) {
  const git = async (...args: string[]) =>
    (await exec('git', args, { cwd: project, env: { ...process.env, ...gitEnv } })).stdout
  const tracked = (await git('ls-files')).split('\n').filter(Boolean)
  expect(tracked).toEqual(
    expect.arrayContaining([
      '.env.example',
      '.gitignore',
      'Dockerfile',
      'README.md',
      'package.json',
      'src/agent.ts',
      'test/agent.test.ts',
    ]),
  )
  expect(tracked).not.toContain('.env')
  expect((await git('log', '--format=%s')).trim()).toBe('Initial commit from create-a2a-agent')
  expect(existsSync(join(project, '.env'))).toBe(withEnv)
  if (withEnv) expect(await git('status', '--porcelain', '--ignored', '--', '.env')).toBe('!! .env\n')
}

const npm = (project: string, script: string) =>
  exec('npm', ['run', script], { cwd: project, timeout: INSTALL_TIMEOUT })

/**
 * Every shell command of the project's README, run with bash as pasted: its server command (`npm run dev`)
 * on a free port, then each block in the project folder. The README says port 3000; here every command gets
 * the free port instead (`localhost:3000` rewritten, `PORT` set as `a2a send` reads it). Docker commands need
 * an engine: template-readme.test.ts checks them without one. `pasted` replaces what a reader pastes in (a
 * placeholder the README asks them to fill in) with the value the test has. Returns each block's output.
 */
async function runReadme(
  project: string,
  serverEnv: Record<string, string> = {},
  commandEnv: Record<string, string> = {},
  pasted: Record<string, string> = {},
): Promise<Array<{ script: string; stdout: string; stderr: string }>> {
  const blocks = readmeBlocks(readFileSync(join(project, 'README.md'), 'utf8'))
  const serverLine = blocks.flat().find((command) => command.kind === 'server')?.line
  expect(serverLine, 'the README says how to serve the agent').toBeDefined()
  const server = await startProject(project, running, serverEnv, ['bash', '-c', serverLine!])
  const port = new URL(server.url).port
  const outputs: Array<{ script: string; stdout: string; stderr: string }> = []
  try {
    for (const block of blocks) {
      const script = block
        .filter((command) => command.kind === 'run')
        .map((command) =>
          Object.entries(pasted).reduce(
            (line, [placeholder, value]) => line.replaceAll(placeholder, value),
            command.line.replaceAll('localhost:3000', `localhost:${port}`),
          ),
        )
        .join('\n')
      if (!script) continue
      const { stdout, stderr } = await exec('bash', ['-e', '-o', 'pipefail', '-c', script], {
        cwd: project,
        env: { ...process.env, ...commandEnv, PORT: port },
        timeout: INSTALL_TIMEOUT,
      }).catch((error) => {
        throw new Error(`The README command failed:\n${script}\n${error.stdout ?? ''}${error.stderr ?? ''}`)
      })
      expect(stdout, script).not.toMatch(/"error"/)
      // Something to show: an answer on stdout, or (a2a send on a question) the question on stderr.
      expect(`${stdout}${stderr}`.trim(), script).not.toBe('')
      outputs.push({ script, stdout, stderr })
    }
  } finally {
    expect(await server.stop()).toBe(true)
  }
  return outputs
}

const outputOf = (outputs: Array<{ script: string; stdout: string }>, command: RegExp) =>
  outputs.find((output) => command.test(output.script))?.stdout

const v1Client = (url: string) =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory()] }),
  ).createFromUrl(url)

/** A SendMessageRequest as the v1.0 SDK builds it. */
const v1Text = (value: string, taskId = '', returnImmediately = false) => ({
  tenant: '',
  metadata: {},
  configuration: returnImmediately ? ({ acceptedOutputModes: [], returnImmediately: true } as any) : undefined,
  message: {
    messageId: crypto.randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text' as const, value }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    taskId,
    contextId: '',
    extensions: [],
    metadata: {},
    referenceTaskIds: [],
  },
})

describe('generated projects', { timeout: 300_000 }, () => {
  let llm: StandInLlm
  beforeAll(async () => {
    llm = await startStandInLlm()
  })
  afterAll(() => llm.close())

  it.each([
    ['echo', 'Echo: ping'],
    ['streaming', 'Stream heard: ping'],
    ['ai-sdk', 'You said: ping'],
    ['mastra', 'You said: ping'],
    ['langgraph', 'You said: ping'],
  ])(
    '%s: installs, commits, type-checks, runs every README command as pasted, and answers over HTTP with npm start',
    async (template, answer) => {
      const project = await sharedProject(`agent-${template}`, ['--yes', '--template', template])
      // A framework's dependencies included: nothing installed runs a script (none needs one on Node).
      expect(installScripts(join(project, 'node_modules'))).toEqual([])
      // A template that calls a model has a .env for its key and endpoint (MODEL_TEMPLATES), the others none.
      await expectCommittedWithoutEnv(project, MODEL_TEMPLATES.has(template as TemplateName))
      await npm(project, 'typecheck')
      // `npm run test` is one of them; with the SSE keep-alive of .env.example on (every 5 ms here), the
      // project's stream test and a2a send read past the comments.
      const heartbeat = { A2A_SSE_HEARTBEAT_MS: '5' }
      const readme = await runReadme(
        project,
        { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: llm.apiKey, ...heartbeat },
        heartbeat,
      )
      expect(outputOf(readme, /^npx a2a send "Hello"$/)).toContain('Hello')
      const server = await startProject(project, running, { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: llm.apiKey })
      const card = await (await fetch(`${server.url}.well-known/agent.json`)).json()
      expect(card.name).toBe(defaultDisplayName(`agent-${template}`))
      expect(card.url).toBe(server.url)
      const reply = await send(server.url, 'ping')
      expect(reply.body.result.status.state).toBe('completed')
      expect(answerText(reply.body.result)).toBe(answer)
      // The official A2A v1.0 client finds and talks to the same generated agent.
      const client = await new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory()] }),
      ).createFromUrl(server.url)
      const sdkReply: any = await client.sendMessage({
        tenant: '',
        metadata: {},
        configuration: undefined,
        message: {
          messageId: 'sdk',
          role: Role.ROLE_USER,
          parts: [
            { content: { $case: 'text', value: 'ping' }, metadata: undefined, filename: '', mediaType: 'text/plain' },
          ],
          taskId: '',
          contextId: '',
          extensions: [],
          metadata: {},
          referenceTaskIds: [],
        },
      })
      expect(sdkReply.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
      expect(sdkReply.artifacts[0].parts.map((part: any) => part.content.value).join('')).toBe(answer)
      expect(await server.stop()).toBe(true)
    },
  )

  it('team: installs, type-checks, passes its own tests (writer over A2A, cancel, writer down), checks both cards, serves both', async () => {
    const project = await generate('agent-team', ['--yes', '--template', 'team'])
    expect(installScripts(join(project, 'node_modules'))).toEqual([])
    await npm(project, 'typecheck')
    const tested = await npm(project, 'test')
    // Every test of the project's own ran (vitest colours its summary even in a pipe: the escapes go first).
    const summary = `${tested.stdout}${tested.stderr}`.replace(
      new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'),
      '',
    )
    expect(summary).toMatch(/Tests\s+5 passed \(5\)/)
    expect((await npm(project, 'card')).stdout).toMatch(
      /planner\.ts \(as served\): valid[\s\S]*writer\.ts \(as served\): valid/,
    )
    // npm start, on a free port: the root has no card (two agents), so the server is up once /healthz answers.
    const port = await freePort()
    const child = spawn('npm', ['start'], {
      cwd: project,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1' },
      detached: true,
    })
    running.add(child)
    const exited = new Promise((resolve) => child.once('exit', resolve))
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
    const reply = await send(`${base}planner`, 'ping')
    expect(reply.body.result.status.state).toBe('completed')
    expect(answerText(reply.body.result)).toBe('Draft: ping')
    // The official A2A v1.0 client finds the planner from its card URL, and gets the writer's draft through it.
    const client = await v1Client(`${base}planner/`)
    const sdkReply: any = await client.sendMessage(v1Text('pong'))
    expect(sdkReply.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(sdkReply.artifacts[0].parts.map((part: any) => part.content.value).join('')).toBe('Draft: pong')
    process.kill(-child.pid!, 'SIGTERM')
    await exited
    running.delete(child)
  })

  it('the Dockerfile, without a Docker engine: its stages run in folders (npm ci from the lockfile, production only), its CMD serves the card and its HEALTHCHECK passes, then fails once the agent is gone', async () => {
    const context = await sharedProject('agent-echo', ['--yes', '--template', 'echo'])
    const stages = readDockerfile(readFileSync(join(context, 'Dockerfile'), 'utf8'))
    const built = await buildLikeDocker(
      context,
      stages,
      join(workspace, 'image-agent-echo'),
      async (command, cwd, env) => {
        await exec('/bin/sh', ['-c', command], {
          cwd,
          env: { ...env, npm_config_update_notifier: 'false' },
          timeout: INSTALL_TIMEOUT,
        })
      },
    )
    expect(built.env).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0' })
    expect(existsSync(join(built.dir, 'node_modules/a2a-runtime/package.json'))).toBe(true)
    // Production only: the dev dependencies and the credential stay out of the image.
    expect(existsSync(join(built.dir, 'node_modules/vitest'))).toBe(false)
    expect(existsSync(join(built.dir, 'node_modules/typescript'))).toBe(false)
    expect(existsSync(join(built.dir, '.env'))).toBe(false)
    expect(existsSync(join(built.dir, 'src/agent.ts'))).toBe(true)

    // `docker run -p`: the image's own HOST (0.0.0.0), a free port in place of 3000.
    const port = String(await freePort())
    const child = startCmd(built, { PORT: port })
    running.add(child)
    const url = `http://127.0.0.1:${port}/`
    const { exited } = await untilCardAnswers(child, url, 'The CMD')
    expect(answerText((await send(url, 'ping')).body.result)).toBe('Echo: ping')

    const healthcheck = built.stage.steps.find((step) => step.keyword === 'HEALTHCHECK')!.shell!
    const check = () =>
      exec('/bin/sh', ['-c', healthcheck], { cwd: built.dir, env: { ...built.env, PORT: port }, timeout: SLOW })
    await check()
    // SIGTERM, as `docker stop` sends it to the CMD: a graceful exit, and the check then fails.
    process.kill(-child.pid!, 'SIGTERM')
    expect(await exited).toBe(0)
    running.delete(child)
    await expect(check()).rejects.toMatchObject({ code: 1 })
  })

  it('echo: installs no ioredis (an optional peer of the runtime), and A2A_STORE=redis://… without it stops the start in one line saying how to install it', async () => {
    const project = await sharedProject('agent-echo', ['--yes', '--template', 'echo'])
    expect(existsSync(join(project, 'node_modules/a2a-runtime/package.json'))).toBe(true)
    expect(existsSync(join(project, 'node_modules/ioredis'))).toBe(false)
    const env = { ...process.env, PORT: '0', A2A_STORE: 'redis://127.0.0.1:6379/0' }
    const failed = await exec('npx', ['a2a', 'start'], { cwd: project, env, timeout: 60_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    )
    expect(failed.code).toBe(1)
    expect(failed.stderr.trim()).toMatch(/^[^\n]*ioredis[^\n]*npm install ioredis[^\n]*$/)
  })

  it('echo: npm run dev reloads a save on the same port, npm run card validates, a2a send prints the answer, and nothing installed has an install script', async () => {
    const project = await generate('agent-tools', ['--yes'])
    const withScripts = installScripts(join(project, 'node_modules'))
    expect(withScripts).toEqual([])

    const card = await exec('npm', ['run', 'card'], { cwd: project, timeout: 60_000 })
    expect(card.stdout).toMatch(/valid/)

    const port = await freePort()
    const dev = spawn('npm', ['run', 'dev'], {
      cwd: project,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1' },
      detached: true,
    })
    running.add(dev)
    let output = ''
    dev.stdout!.on('data', (chunk) => (output += chunk))
    dev.stderr!.on('data', (chunk) => (output += chunk))
    await expect.poll(() => output, { timeout: SLOW }).toContain('watching for changes')
    const url = `http://127.0.0.1:${port}/`
    const sent = await exec('npx', ['a2a', 'send', 'hi', '--skill', 'echo', '-o', 'json'], {
      cwd: project,
      env: { ...process.env, PORT: String(port) },
      timeout: 60_000,
    })
    const { task } = JSON.parse(sent.stdout)
    expect(task.status.state).toBe('TASK_STATE_COMPLETED')
    expect(task.artifacts.flatMap((artifact: any) => artifact.parts.map((part: any) => part.text)).join('')).toBe(
      'Echo: hi',
    )
    // The same agent over HTTP+JSON: a send, then the task read, listed and its cancel refused (it has ended).
    const overRest = (...args: string[]) =>
      exec('npx', ['a2a', ...args, '--transport', 'HTTP+JSON', '-o', 'json'], {
        cwd: project,
        env: { ...process.env, PORT: String(port) },
        timeout: 60_000,
      })
    const restTask = JSON.parse((await overRest('send', 'again')).stdout).task
    expect(restTask.status.state).toBe('TASK_STATE_COMPLETED')
    expect(JSON.parse((await overRest('task', 'get', restTask.id)).stdout).id).toBe(restTask.id)
    expect(JSON.parse((await overRest('task', 'list')).stdout).tasks.map((each: any) => each.id)).toContain(restTask.id)
    const cancel = await overRest('task', 'cancel', restTask.id).catch((error: any) => error)
    expect(cancel.code).toBe(1)
    expect(JSON.parse(cancel.stdout).error.code).toBe('TaskNotCancelableError')

    // The project's agent passes the conformance checks of A2A v1.0 over every binding it declares.
    const conformance = await exec('npx', ['a2a', 'conformance', '-o', 'json'], {
      cwd: project,
      env: { ...process.env, PORT: String(port) },
      timeout: 120_000,
    })
    const report = JSON.parse(conformance.stdout)
    expect(report.checks.filter((check: any) => check.status === 'fail')).toEqual([])
    expect(report.checks.filter((check: any) => check.status === 'pass').length).toBeGreaterThan(20)

    const agentFile = join(project, 'src/agent.ts')
    writeFileSync(
      agentFile,
      readFileSync(agentFile, 'utf8').replace('`${skillName}: ${said}`', '`${skillName} says: ${said}`'),
    )
    await expect
      .poll(async () => answerText((await send(url, 'again')).body.result), { interval: 20, timeout: SLOW })
      .toBe('Echo says: again')
    const exited = new Promise((resolve) => dev.once('exit', resolve))
    process.kill(-dev.pid!, 'SIGTERM')
    await exited
    running.delete(dev)
  })

  it('installs, tests and serves with pnpm, yarn and bun too (no install scripts, no native watcher)', async () => {
    const env = {
      ...process.env,
      PATH: `${packageManagersOnPath(join(workspace, 'package-managers'))}:${process.env.PATH}`,
    }
    for (const pm of OTHER_PACKAGE_MANAGERS) {
      const { stdout, stderr } = await exec(
        process.execPath,
        [bin, `agent-with-${pm}`, '--pm', pm, '--no-git', '--json', '--yes'],
        {
          cwd: workspace,
          timeout: INSTALL_TIMEOUT,
          env,
        },
      )
      const summary = JSON.parse(stdout.trim().split('\n').at(-1)!)
      expect(summary.installed).toBe(true)
      // pnpm skips dependencies' build scripts and says so; there must be none to skip.
      expect(stderr).not.toMatch(/Ignored build scripts/i)
      expect(summary.commands.at(-1)).toBe(pm === 'pnpm' ? 'pnpm dev' : `${pm} dev`)
      const run = (script: string) => exec(pm, ['run', script], { cwd: summary.dir, env, timeout: INSTALL_TIMEOUT })
      await run('typecheck')
      await run('test')
      const server = await startProject(summary.dir, running, {}, [pm, 'run', 'start'], env)
      expect(answerText((await send(server.url, 'ping')).body.result)).toBe('Echo: ping')
      expect(await server.stop()).toBe(true)
    }
  })

  it('the official SDK clients (A2A v1.0 over JSON-RPC and HTTP+JSON, v0.3) do every interaction with a project generated with --yes, no setting', async () => {
    const project = await generate('sdk-agent', ['--yes'])
    const server = await startProject(project, running)
    const client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory()] }),
    ).createFromUrl(server.url)
    const sent: any = await client.sendMessage(v1Message('one'))
    expect(sent.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const events: any[] = []
    for await (const event of client.sendMessageStream(v1Message('two'))) events.push(event)
    expect(events[0].payload.$case).toBe('task')
    expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(((await client.getTask({ tenant: '', id: sent.id })) as any).id).toBe(sent.id)
    await expect(client.cancelTask({ tenant: '', id: sent.id, metadata: {} })).rejects.toThrow(/already completed/)
    const listed: any = await client.listTasks({
      tenant: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 10,
    } as any)
    expect(listed.tasks.length).toBe(2)

    // The same agent over HTTP+JSON (REST), found through the card's interface, no setting.
    const rest = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new RestTransportFactory()],
        preferredTransports: ['HTTP+JSON'],
      }),
    ).createFromUrl(server.url)
    const restSent: any = await rest.sendMessage(v1Message('over REST'))
    expect(restSent.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const restEvents: any[] = []
    for await (const event of rest.sendMessageStream(v1Message('streamed over REST'))) restEvents.push(event)
    expect(restEvents.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(((await rest.getTask({ tenant: '', id: restSent.id })) as any).id).toBe(restSent.id)

    // The same agent, no setting, for v0.3 clients (which send no A2A-Version): the card sends them to POST /v0.3.
    const v03 = await A2AClientV03.fromCardUrl(`${server.url}.well-known/agent-card.json`)
    const message = (value: string) => ({
      message: {
        kind: 'message' as const,
        messageId: crypto.randomUUID(),
        role: 'user' as const,
        parts: [{ kind: 'text' as const, text: value }],
      },
    })
    const v03Sent: any = await v03.sendMessage(message('three'))
    expect(v03Sent.result).toMatchObject({ kind: 'task', status: { state: 'completed' } })
    const v03Events: any[] = []
    for await (const event of v03.sendMessageStream(message('four'))) v03Events.push(event)
    expect(v03Events[0]).toMatchObject({ kind: 'task' })
    expect(v03Events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } })
    expect(((await v03.getTask({ id: v03Sent.result.id })) as any).result.id).toBe(v03Sent.result.id)
    expect(await server.stop()).toBe(true)
  })

  it('multi-turn with an API key: commits without .env, the README shows how to answer its question (a2a send --task-id, taskId) and works as pasted, and it answers the follow-up', async () => {
    const project = await sharedProject('trip-agent', [
      '--yes',
      '--template',
      'multi-turn',
      '--no-streaming',
      '--auth',
      'apikey',
    ])
    await expectCommittedWithoutEnv(project, true)
    await npm(project, 'typecheck')
    const readme = await runReadme(project)
    // a2a send stops at the question, printing it and the command that answers it.
    const firstTurn = readme.find((output) => output.script === 'npx a2a send "Plan a weekend"')!
    expect(firstTurn.stdout).toMatch(/State: INPUT_REQUIRED/)
    expect(firstTurn.stdout).toMatch(/one question before I answer/)
    expect(firstTurn.stdout).toMatch(/Resume: a2a send --task-id \S+/)
    expect(outputOf(readme, /--task-id "\$TASK"/)).toContain('with "Lisbon" in mind')
    expect(outputOf(readme, /"taskId":"'"\$TASK"'"/)).toMatch(/"state":"completed"/)

    const key = /^A2A_API_KEY=(.+)$/m.exec(readFileSync(join(project, '.env'), 'utf8'))![1]!
    const server = await startProject(project, running)
    const card = await (await fetch(`${server.url}.well-known/agent.json`)).json()
    expect(card.capabilities.streaming).toBe(false)
    expect((await send(server.url, 'Plan a weekend')).status).toBe(401)
    const question = (await send(server.url, 'Plan a weekend', { 'x-api-key': key })).body.result
    expect(question.status.state).toBe('input-required')
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'message/send',
        params: {
          message: { role: 'user', messageId: 'm2', taskId: question.id, parts: [{ kind: 'text', text: 'Porto' }] },
        },
      }),
    })
    const answer = ((await response.json()) as { result: any }).result
    expect(answer.status.state).toBe('completed')
    expect(answerText(answer)).toContain('Porto')

    // The same turns through the official v1.0 client.
    const client = await v1Client(server.url)
    const withKey = { serviceParameters: { 'X-API-Key': key } }
    const asked: any = await client.sendMessage(v1Text('Plan a weekend'), withKey)
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    const planned: any = await client.sendMessage(v1Text('Faro', asked.id), withKey)
    expect(planned.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(planned.artifacts[0].parts.map((part: any) => part.content.value).join('')).toContain('Faro')
    expect(await server.stop()).toBe(true)
  })

  it('streaming: the official v1.0 client resubscribes to a running task and cancels it', async () => {
    const project = await sharedProject('agent-streaming', ['--yes', '--template', 'streaming'])
    const server = await startProject(project, running)
    const client = await v1Client(server.url)
    const task: any = await client.sendMessage(
      v1Text(Array.from({ length: 60 }, (_, i) => `word${i}`).join(' '), '', true),
    )
    const events: any[] = []
    const following = (async () => {
      for await (const event of client.resubscribeTask({ tenant: '', id: task.id })) events.push(event)
    })()
    await expect
      .poll(() => events.filter((event) => event.payload.$case === 'artifactUpdate').length, { timeout: SLOW })
      .toBeGreaterThan(1)
    const canceled: any = await client.cancelTask({ tenant: '', id: task.id, metadata: {} })
    expect(canceled.status.state).toBe(TaskState.TASK_STATE_CANCELED)
    await following
    expect(events[0].payload.$case).toBe('task')
    expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_CANCELED)
    expect(await server.stop()).toBe(true)
  })

  it('keeps hostile names and descriptions exact: the project type-checks, its tests pass, and the card serves the strings', async () => {
    const name = 'Bot "Quote" \\ {{handlebars}} </script> `tick` ${x} 🚀'
    const description =
      'Line one\nline two with \'single\' and "double" quotes, \\n literal, </script>, {{#each}} and ✨'
    const skill = JSON.stringify({
      id: 'weird',
      name: 'Wëird: skill */ //',
      description: '<b>bold</b> {{x}} \\',
      tags: ['a"b', "c'd"],
      examples: ['Say "hi" \\ </script>'],
    })
    const project = await generate('hostile', ['--yes', '--name', name, '--description', description, '--skill', skill])
    await npm(project, 'typecheck')
    await npm(project, 'test')
    const server = await startProject(project, running)
    const card = await (await fetch(`${server.url}.well-known/agent.json`)).json()
    expect(card.name).toBe(name)
    expect(card.description).toBe(description)
    expect(card.skills[0]).toMatchObject({
      id: 'weird',
      name: 'Wëird: skill */ //',
      description: '<b>bold</b> {{x}} \\',
      tags: ['a"b', "c'd"],
      examples: ['Say "hi" \\ </script>'],
    })
    expect(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).description).toBe(description)
    expect(await server.stop()).toBe(true)
  })

  it('push notifications: the project passes its own tests, and npm start posts updates to a webhook the official client configures, the guard on', async () => {
    const project = await generate('push-agent', ['--yes', '--push-notifications'])
    await npm(project, 'test')
    const receiver = await startReceiver()
    // The guard stays on; only this machine's receiver is allowed, as .env.example shows.
    const server = await startProject(project, running, { A2A_PUSH_ALLOW: '127.0.0.1', A2A_PUSH_ALLOW_HTTP: 'true' })
    const card = await (
      await fetch(`${server.url}.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })
    ).json()
    expect(card.capabilities.pushNotifications).toBe(true)
    const client = await v1Client(server.url)
    const webhook = {
      tenant: '',
      id: '',
      taskId: '',
      url: receiver.url,
      token: 'webhook-token',
      authentication: undefined,
    }
    const sent: any = await client.sendMessage({
      ...v1Text('ping'),
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: webhook,
        historyLength: undefined,
        returnImmediately: false,
      } as any,
    })
    expect(sent.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
    await expect
      .poll(() => receiver.delivered.at(-1)?.body.statusUpdate?.status.state, { timeout: SLOW })
      .toBe('TASK_STATE_COMPLETED')
    expect(
      receiver.delivered.every((delivery) => delivery.headers['x-a2a-notification-token'] === 'webhook-token'),
    ).toBe(true)
    expect(
      receiver.delivered.some((delivery) => delivery.body.artifactUpdate?.artifact.parts[0].text === 'Echo: ping'),
    ).toBe(true)
    const created: any = await client.createTaskPushNotificationConfig({ ...webhook, taskId: sent.id, id: 'second' })
    expect(created).toMatchObject({ id: 'second', taskId: sent.id, url: receiver.url })
    const listed: any = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: sent.id,
      pageSize: 0,
      pageToken: '',
    })
    expect(listed.configs.map((config: { id: string }) => config.id)).toContain('second')
    await expect(
      client.createTaskPushNotificationConfig({
        ...webhook,
        taskId: sent.id,
        url: 'http://169.254.169.254/latest/meta-data/',
      }),
    ).rejects.toThrow(/link-local/)
    expect(await server.stop()).toBe(true)
  })

  it('bearer auth: commits without .env, every README command works as pasted, npm start checks the token generated into .env, and the card stays public', async () => {
    const project = await sharedProject('secure-agent', ['--yes', '--auth', 'bearer'])
    await expectCommittedWithoutEnv(project, true)
    await npm(project, 'typecheck')
    const readme = await runReadme(project)
    expect(outputOf(readme, /^npx a2a send "Hello"$/)).toContain('Echo: Hello')
    expect(outputOf(readme, /message\/send/)).toMatch(/"state":"completed"/)
    expect(outputOf(readme, /message\/stream/)).toMatch(/^data: /m)
    const token = /^A2A_BEARER_TOKEN=(.+)$/m.exec(readFileSync(join(project, '.env'), 'utf8'))![1]!
    const server = await startProject(project, running)
    const card = await (await fetch(`${server.url}.well-known/agent.json`)).json()
    expect(card.authentication).toEqual({ schemes: ['bearer'] })
    expect((await send(server.url, 'hi')).status).toBe(401)
    expect((await send(server.url, 'hi', { authorization: 'Bearer wrong' })).status).toBe(401)
    const accepted = await send(server.url, 'hi', { authorization: `Bearer ${token}` })
    expect(accepted.body.result.status.state).toBe('completed')
    const client = await v1Client(server.url)
    await expect(client.sendMessage(v1Text('hi'))).rejects.toThrow()
    const viaSdk: any = await client.sendMessage(v1Text('hi'), {
      serviceParameters: { Authorization: `Bearer ${token}` },
    })
    expect(viaSdk.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(await server.stop()).toBe(true)
  })

  it('OpenID Connect (--auth oidc --yes, no issuer given): commits without .env, passes its own tests, every README command works as pasted with a JWT for the placeholder, and npm start checks JWTs of the issuer set, telling the agent who called', async () => {
    const project = await sharedProject('jwt-agent', ['--yes', '--auth', 'oidc'])
    await expectCommittedWithoutEnv(project, true)
    await npm(project, 'typecheck')
    const issuer = await startOidcIssuer()
    try {
      // What the user sets in .env before serving: the environment wins over it.
      const settings = { A2A_OIDC_ISSUER: issuer.url, A2A_OIDC_AUDIENCE: TEST_AUDIENCE }
      const token = await issuer.mint({ sub: 'readme-reader' })
      const readme = await runReadme(project, settings, {}, { '<a JWT from your issuer>': token })
      // `npm run test` is a README command: the project's own tests, on their own issuer.
      expect(readme.some((output) => /npm run test/.test(output.script))).toBe(true)
      const sent = readme.find((output) => /^npx a2a send "Hello" --bearer "\$TOKEN"$/m.test(output.script))!
      expect(sent.stdout).toContain('Echo: Hello')
      expect(sent.stdout).toMatch(/^State: COMPLETED$/m)
      expect(outputOf(readme, /message\/send/)).toMatch(/"state":"completed"/)

      const server = await startProject(project, running, settings)
      const card = await (await fetch(`${server.url}.well-known/agent.json`)).json()
      expect(card.authentication).toEqual({ schemes: ['oidc'] })
      expect((await send(server.url, 'hi')).status).toBe(401)
      const hourAgo = Math.floor(Date.now() / 1000) - 3600
      const expired = await send(server.url, 'hi', {
        authorization: `Bearer ${await issuer.mint({ iat: hourAgo - 60, exp: hourAgo })}`,
      })
      expect(expired.status).toBe(401)
      expect(expired.body.error?.message).toMatch(/expired/)
      const accepted = await send(server.url, 'hi', { authorization: `Bearer ${token}` })
      expect(answerText(accepted.body.result)).toBe('Echo: hi')
      // The echo agent's progress names the caller: ctx.principal, from the token's sub.
      const streamed = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'progress',
          method: 'message/stream',
          params: { message: { role: 'user', messageId: 'm-progress', parts: [{ kind: 'text', text: 'hi' }] } },
        }),
      })
      expect(await streamed.text()).toContain('for readme-reader')
      const client = await v1Client(server.url)
      const viaSdk: any = await client.sendMessage(v1Text('hi'), {
        serviceParameters: { Authorization: `Bearer ${await issuer.mint({ sub: 'sdk-user' })}` },
      })
      expect(viaSdk.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
      expect(await server.stop()).toBe(true)
    } finally {
      await issuer.stop()
    }
  })
})
