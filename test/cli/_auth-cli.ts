import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { expect } from 'vitest'
import { TEST_AUDIENCE } from '../_oidc-issuer.ts'
import { a2aBin, type CommandResult, type StartedA2a, startA2a } from '../_support.ts'
import type { OAuthServer } from '../fixtures/oauth-server.ts'

/**
 * What the `a2a auth` suites share: the CLI as a process with its stderr watched, an agent taking the authorization
 * server's tokens, the token file, and a server of cards.
 */

/** The environment without anything that would choose the agent, the credentials or the configuration folder. */
export const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_|A2ACLI_|XDG_CONFIG_HOME$)/.test(key)),
) as NodeJS.ProcessEnv

const oidcAgentSource = `import { defineAgent } from 'a2a-runtime'

export default defineAgent({
  card: {
    name: 'OIDC Fixture',
    description: 'Greets the caller its token names',
    skills: [{ id: 'greet', name: 'Greet', description: 'Greets the caller', tags: ['greet'], examples: ['Hi'] }],
    authentication: { schemes: ['oidc'] },
  },
  execute(ctx, task) {
    task.artifact('Hello ' + (ctx.principal?.subject ?? 'nobody'))
    task.complete()
  },
})
`

/** An agent (`a2a start`, a process) greeting the subject of its caller's token, `server` its OpenID Connect issuer. */
export function startOidcAgent(prefix: string, server: OAuthServer): Promise<StartedA2a> {
  return startA2a(prefix, oidcAgentSource, {
    ...cleanEnv,
    A2A_OIDC_ISSUER: server.url,
    A2A_OIDC_AUDIENCE: TEST_AUDIENCE,
  })
}

/** `startA2aCommand`'s options: run in `home`, configured from `configHome` (XDG_CONFIG_HOME) and `extra`. */
export function commandOptions(
  at: { home: string; configHome: string; running: Set<ChildProcess> },
  extra: NodeJS.ProcessEnv = {},
  limitMs?: number,
) {
  return {
    cwd: at.home,
    env: { ...cleanEnv, XDG_CONFIG_HOME: at.configHome, ...extra },
    running: at.running,
    ...(limitMs && { limitMs }),
  }
}

/** Ends (by PID) the commands a failed test left running. */
export function killRunning(running: Set<ChildProcess>) {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
}

/** The file `a2a auth login` keeps tokens in, under the configuration folder `configHome`. */
export const tokenFileIn = (configHome: string) => join(configHome, 'a2a-cli', 'tokens.json')

/** The tokens stored under `configHome`. */
export const storedTokensIn = (configHome: string) =>
  (JSON.parse(readFileSync(tokenFileIn(configHome), 'utf8')) as { tokens: Record<string, string>[] }).tokens

/** The address of the A2A card of the agent at `agentUrl`. */
export const agentCardUrlOf = (agentUrl: string) => new URL('.well-known/agent-card.json', agentUrl).href

export interface RunningA2a {
  child: ChildProcess
  /** Resolves with the first match of `pattern` in stderr so far or to come. */
  stderrMatch(pattern: RegExp): Promise<RegExpExecArray>
  done: Promise<CommandResult>
}

/** `a2a <args>` without a terminal, killed by PID past `limitMs`; `running` lets the suite end it if a test fails. */
export function startA2aCommand(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; running: Set<ChildProcess>; limitMs?: number },
): RunningA2a {
  const child = spawn(process.execPath, [a2aBin, ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  options.running.add(child)
  let stdout = ''
  let stderr = ''
  const waiters: (() => void)[] = []
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
    for (const wake of waiters.splice(0)) wake()
  })
  const timer = setTimeout(() => process.kill(child.pid!, 'SIGKILL'), options.limitMs ?? 20_000)
  const done = new Promise<CommandResult>((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer)
      options.running.delete(child)
      for (const wake of waiters.splice(0)) wake()
      resolve({ code, stdout, stderr })
    }),
  )
  const stderrMatch = async (pattern: RegExp): Promise<RegExpExecArray> => {
    for (;;) {
      const match = pattern.exec(stderr)
      if (match) return match
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`a2a ended without printing ${pattern}: ${stderr}`)
      await new Promise<void>((resolve) => waiters.push(resolve))
    }
  }
  return { child, stderrMatch, done }
}

/** Runs `a2a auth login …` with the device flow and approves the user code it prints, as the user would. */
export async function deviceLogin(
  server: OAuthServer,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; running: Set<ChildProcess> },
): Promise<CommandResult> {
  const login = startA2aCommand(['auth', 'login', ...args], options)
  const [, userCode] = await login.stderrMatch(/^User code: (\S+)$/m)
  const approved = await fetch(`${server.url}/approve?user_code=${userCode}`)
  expect(approved.status).toBe(200)
  return login.done
}

/** Serves `cards[path]` as JSON on 127.0.0.1 (a free port); anything else is 404. `requests`: each one's path and headers. */
export async function startCardServer(cards: Record<string, unknown>): Promise<{
  origin: string
  requests: { path: string; headers: IncomingHttpHeaders }[]
  stop(): Promise<void>
}> {
  const requests: { path: string; headers: IncomingHttpHeaders }[] = []
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://cards').pathname
    requests.push({ path, headers: request.headers })
    const card = cards[path]
    if (card === undefined) response.writeHead(404).end()
    else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A v1.0 card with these security schemes (and what it requires of them). */
export function cardWith(
  securitySchemes: Record<string, unknown>,
  securityRequirements?: { schemes: Record<string, { list: string[] }> }[],
) {
  return {
    name: 'OAuth Fixture',
    description: 'A card for a2a auth tests',
    version: '1.0.0',
    supportedInterfaces: [{ url: 'http://127.0.0.1:9/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: {},
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    securitySchemes,
    ...(securityRequirements && { securityRequirements }),
  }
}
