import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type OidcIssuer, startOidcIssuer, TEST_AUDIENCE } from '../_oidc-issuer.ts'
import { runA2a, type StartedA2a, startA2a } from '../_support.ts'

/**
 * `a2a send` as a process against `a2a start` serving an agent whose card declares `oidc`, trusting a local issuer:
 * a JWT given with --token (or A2A_BEARER_TOKEN) goes as `Authorization: Bearer` and the agent answers the caller it
 * names; without one, or with one the agent refuses, the command says why in one line and exits 1 (the CLI's code
 * for an operation it could not complete; it has no code of its own for authentication).
 */

/** Greets the caller its token proves (ctx.principal). */
const agentSource = `import { defineAgent } from 'a2a-runtime'

export default defineAgent({
  card: {
    name: 'JWT Fixture',
    description: 'Greets the caller its token names, for a2a send tests',
    capabilities: { streaming: true },
    skills: [{ id: 'greet', name: 'Greet', description: 'Greets the caller', tags: ['greet'], examples: ['Hi'] }],
    authentication: { schemes: ['oidc'] },
  },
  execute(ctx, task) {
    task.artifact('Hello ' + (ctx.principal?.subject ?? 'nobody') + ': ' + ctx.text)
    task.complete()
  },
})
`

/** The environment without anything that would pick the agent or credentials for the CLI. */
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_)/.test(key)),
) as NodeJS.ProcessEnv

let issuer: OidcIssuer
let agent: StartedA2a
/** Where `a2a send` runs: a folder of no project, so no .env is read. */
let elsewhere: string
const running = new Set<ChildProcess>()

beforeAll(async () => {
  issuer = await startOidcIssuer()
  elsewhere = mkdtempSync(join(tmpdir(), 'a2a-send-jwt-'))
  agent = await startA2a('a2a-send-jwt-agent-', agentSource, {
    ...cleanEnv,
    A2A_OIDC_ISSUER: issuer.url,
    A2A_OIDC_AUDIENCE: TEST_AUDIENCE,
  })
})

afterEach(() => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
})

afterAll(async () => {
  await agent?.dispose()
  await issuer?.stop()
  if (elsewhere) rmSync(elsewhere, { recursive: true, force: true })
})

const send = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runA2a(['send', ...args, '--url', agent.url], { cwd: elsewhere, env: { ...cleanEnv, ...env }, running })

/** One line on stderr (after the line naming the agent), no stack. */
function refusal(stderr: string): string {
  const lines = stderr.trimEnd().split('\n')
  expect(lines[0]).toMatch(/^→ JWT Fixture at /)
  expect(lines).toHaveLength(2)
  expect(stderr).not.toMatch(/^\s+at /m)
  return lines[1]!
}

describe('a2a send to an agent that takes JWTs of an OpenID Connect issuer', () => {
  it.each([
    ['streaming', []],
    ['--no-stream', ['--no-stream']],
  ])(
    'with --token <jwt> (%s) sends it as a bearer token, and the agent answers the caller it names',
    async (_, flags) => {
      const token = await issuer.mint({ sub: 'carol' })
      const { code, stdout, stderr } = await send(['Hi', '--token', token, ...flags])
      expect(stdout).toBe('Hello carol: Hi\n')
      expect(stderr).toContain('✓ completed')
      expect(stderr).not.toContain(token)
      expect(code).toBe(0)
    },
  )

  it('takes the JWT from A2A_BEARER_TOKEN for an agent on this machine', async () => {
    const { code, stdout } = await send(['Hi'], { A2A_BEARER_TOKEN: await issuer.mint({ sub: 'dave' }) })
    expect(stdout).toBe('Hello dave: Hi\n')
    expect(code).toBe(0)
  })

  it('without a token says in one line that the agent wants one and how to give it, and exits 1', async () => {
    const { code, stdout, stderr } = await send(['Hi'])
    expect(stdout).toBe('')
    expect(refusal(stderr)).toBe(
      'a2a: The agent needs credentials (HTTP 401: Unauthorized: send Authorization: Bearer <token>): ' +
        'pass a JWT of its OpenID Connect issuer with --token <jwt> ' +
        '(or set A2A_BEARER_TOKEN / A2A_API_KEY for an agent on this machine)',
    )
    expect(code).toBe(1)
  })

  it('with an expired token says in one line that the token expired (as the agent says it), and exits 1', async () => {
    const hourAgo = Math.floor(Date.now() / 1000) - 3600
    const token = await issuer.mint({ iat: hourAgo - 60, exp: hourAgo })
    const { code, stdout, stderr } = await send(['Hi', '--token', token])
    expect(stdout).toBe('')
    expect(refusal(stderr)).toBe(
      'a2a: The agent refused the credentials given (HTTP 401: Unauthorized: the token has expired)',
    )
    expect(stderr).not.toContain(token)
    expect(code).toBe(1)
  })

  it.each([
    ['meant for another agent', { aud: 'https://another.agent' }, 'the token is not meant for this agent (aud)'],
    [
      'of another issuer',
      { iss: 'https://issuer.example' },
      "the token's issuer (iss) is not the one this agent trusts",
    ],
  ])(
    "with a token %s says so in one line, the agent's reason as it gave it, and exits 1",
    async (_, claims, reason) => {
      const { code, stderr } = await send(['Hi', '--no-stream', '--token', await issuer.mint(claims)])
      expect(refusal(stderr)).toBe(`a2a: The agent refused the credentials given (HTTP 401: Unauthorized: ${reason})`)
      expect(code).toBe(1)
    },
  )
})
