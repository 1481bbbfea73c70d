import { type ChildProcess, execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parse as parseToml } from 'smol-toml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { answerText, SLOW, send, untilCardAnswers } from '../_served-project.ts'
import { freePort } from '../_support.ts'
import { type Built, buildLikeDocker, readDockerfile, startCmd } from './e2e-dockerfile.ts'

/**
 * A project generated with every platform target, installed, its image built into folders as Docker would (there is
 * no Docker engine here), and its CMD started as each platform starts it: with the environment the platform's file
 * gives (AgentCore's runtime.json, Cloud Run's PORT, the Deployment's env, fly.toml's [env]). Each answers on the
 * port PORT names, on the paths its platform asks. The ports are free ones (3000 and 9000 may be busy here), except
 * one run at AgentCore's very 9000 when it is free. HOST is loopback here, not the platforms' 0.0.0.0: a test server
 * is not for the network (deploy-files.test holds the files to 0.0.0.0).
 */

const bin = fileURLToPath(new URL('../../generator/bin/create-a2a-agent.mjs', import.meta.url))
const exec = promisify(execFile)
const INSTALL_TIMEOUT = 180_000

let workspace: string
let project: string
let built: Built
const running = new Set<ChildProcess>()

beforeAll(async () => {
  workspace = mkdtempSync(join(realpathSync(tmpdir()), 'a2a-deploy-serve-'))
  const { stdout } = await exec(
    process.execPath,
    [bin, 'deployed', '--yes', '--pm', 'npm', '--no-git', '--json', '--deploy', 'agentcore,cloudrun,k8s,fly'],
    {
      cwd: workspace,
      timeout: INSTALL_TIMEOUT,
      env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
    },
  )
  const summary = JSON.parse(stdout.trim().split('\n').at(-1)!)
  expect(summary.installed).toBe(true)
  project = summary.dir
  const stages = readDockerfile(readFileSync(join(project, 'Dockerfile'), 'utf8'))
  built = await buildLikeDocker(project, stages, join(workspace, 'image'), async (command, cwd, env) => {
    await exec('/bin/sh', ['-c', command], {
      cwd,
      env: { ...env, npm_config_update_notifier: 'false' },
      timeout: INSTALL_TIMEOUT,
    })
  })
}, 2 * INSTALL_TIMEOUT)

afterAll(async () => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL')
  if (workspace) await rm(workspace, { recursive: true, force: true, maxRetries: 3 })
}, 120_000)

const read = (path: string) => readFileSync(join(project, path), 'utf8')

interface Served {
  url: string
  /** What the process wrote so far, stdout and stderr. */
  output(): string
  /** SIGTERM, as the platform stops it: resolves to the exit code. */
  stop(): Promise<number | null>
}

/** The image's CMD with `env` over the image's own, on `env.PORT` of 127.0.0.1; resolved once the card answers. */
async function serveImage(env: Record<string, string>): Promise<Served> {
  const child = startCmd(built, { ...env, HOST: '127.0.0.1' })
  running.add(child)
  const url = `http://127.0.0.1:${env.PORT}/`
  const { exited, output } = await untilCardAnswers(child, url, `The CMD with PORT=${env.PORT}`)
  expect(output()).toContain(`listening on ${url}`)
  return {
    url,
    output,
    async stop() {
      process.kill(-child.pid!, 'SIGTERM')
      const code = await exited
      running.delete(child)
      return code
    },
  }
}

async function get(url: string) {
  const response = await fetch(url)
  return { status: response.status, body: (await response.json()) as any }
}

/** Whether a server could listen on `port` on every interface now (so on loopback too). */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)))
  })
}

/** AgentCore's contract at `url`: the health check, the A2A card, JSON-RPC at POST /. */
async function expectAgentCoreContract(url: string) {
  const ping = await get(`${url}ping`)
  expect(ping.status).toBe(200)
  expect(ping.body.status).toBe('Healthy')
  const card = await get(`${url}.well-known/agent-card.json`)
  expect(card.status).toBe(200)
  expect(card.body.name).toBe('Deployed')
  const reply = await send(url, 'ping')
  expect(reply.status).toBe(200)
  expect(answerText(reply.body.result)).toBe('Echo: ping')
}

describe('each platform starting the image as it does', () => {
  it("AgentCore: runtime.json's environment, PORT moved to a free port, serves /ping, the card and POST / there", {
    timeout: SLOW * 2,
  }, async () => {
    const { environmentVariables } = JSON.parse(read('agentcore/runtime.json'))
    expect(environmentVariables.PORT).toBe('9000')
    const served = await serveImage({ ...environmentVariables, PORT: String(await freePort()) })
    await expectAgentCoreContract(served.url)
    expect(await served.stop()).toBe(0)
  })

  it("AgentCore: runtime.json's environment, its port 9000 kept (skipped when this machine has 9000 busy)", {
    timeout: SLOW * 2,
  }, async (context) => {
    const { environmentVariables } = JSON.parse(read('agentcore/runtime.json'))
    if (!(await portIsFree(9000))) {
      context.skip('port 9000 is taken on this machine: the contract was checked on a free port above')
      return
    }
    let served: Served
    try {
      served = await serveImage(environmentVariables)
    } catch (error) {
      // Taken between the check and the start: the same skip, never a pass.
      if (/EADDRINUSE|address already in use/i.test(String(error))) context.skip('port 9000 was taken meanwhile')
      throw error
    }
    expect(served.url).toBe('http://127.0.0.1:9000/')
    await expectAgentCoreContract(served.url)
    expect(await served.stop()).toBe(0)
  })

  it("Cloud Run: the PORT Cloud Run sets, with service.yaml's environment, answers its probes and an A2A call", {
    timeout: SLOW * 2,
  }, async () => {
    const service = parseYaml(read('service.yaml'))
    const [container] = service.spec.template.spec.containers
    const env = Object.fromEntries(
      container.env.map((entry: { name: string; value: string }) => [entry.name, entry.value]),
    )
    const served = await serveImage({ ...env, PORT: String(await freePort()) })
    for (const probe of [container.startupProbe, container.livenessProbe]) {
      expect((await fetch(new URL(probe.httpGet.path, served.url))).status, probe.httpGet.path).toBe(200)
    }
    expect(answerText((await send(served.url, 'hello')).body.result)).toBe('Echo: hello')
    expect(await served.stop()).toBe(0)
    // The drain Cloud Run's 10 s before SIGKILL leaves room for: service.yaml's A2A_SHUTDOWN_TIMEOUT_MS in force.
    expect(env.A2A_SHUTDOWN_TIMEOUT_MS).toBe('8000')
    expect(served.output()).toContain('SIGTERM: shutting down (running tasks get up to 8000 ms)')
  })

  it("Kubernetes: the Deployment's environment (its heap included) answers every probe; SIGTERM exits cleanly", {
    timeout: SLOW * 2,
  }, async () => {
    const deployment = parseYaml(read('k8s/deployment.yaml'))
    const [container] = deployment.spec.template.spec.containers
    const env = Object.fromEntries(
      container.env.map((entry: { name: string; value: string }) => [entry.name, entry.value]),
    )
    expect(env.NODE_OPTIONS).toMatch(/--max-old-space-size=\d+/)
    const served = await serveImage({ ...env, PORT: String(await freePort()) })
    for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
      expect((await fetch(new URL(probe.httpGet.path, served.url))).status, probe.httpGet.path).toBe(200)
    }
    expect(await served.stop()).toBe(0)
  })

  it("Fly.io: fly.toml's [env] on its internal port answers its checks", { timeout: SLOW * 2 }, async () => {
    const fly = parseToml(read('fly.toml')) as any
    expect(fly.http_service.internal_port).toBe(Number(fly.env.PORT))
    const served = await serveImage({ ...fly.env, PORT: String(await freePort()) })
    for (const check of fly.http_service.checks) {
      const response = await fetch(new URL(check.path, served.url), { method: check.method })
      expect(response.status, check.path).toBe(200)
    }
    expect(await served.stop()).toBe(0)
  })
})
