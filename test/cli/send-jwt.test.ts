import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type OidcIssuer, startOidcIssuer, TEST_AUDIENCE } from '../_oidc-issuer.ts'
import { runA2a, type StartedA2a, startA2a } from '../_support.ts'

/**
 * `a2a send` as a process against `a2a start` serving an agent whose card declares `oidc`, trusting a local issuer:
 * a JWT given with --bearer (or the project's A2A_BEARER_TOKEN) goes as `Authorization: Bearer` and the agent answers
 * the caller it names; without one, or with one the agent refuses, the command says why in one error (never the
 * token) and exits 4, the code the A2A CLI specification reserves for authentication.
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
  runA2a(['send', ...args, '--agent-card', agent.url], { cwd: elsewhere, env: { ...cleanEnv, ...env }, running })

/** The error of a failed run: exit status, the envelope's code and message (one error, no stack). */
function refusal({ code, stdout, stderr }: { code: number | null; stdout: string; stderr: string }) {
  expect(stdout).toBe('')
  expect(stderr.match(/^Error: /gm)).toHaveLength(1)
  expect(stderr).not.toMatch(/^\s+at /m)
  return {
    code,
    error: /^Error: (.*)$/m.exec(stderr)?.[1],
    errorCode: /^Code: (.*)$/m.exec(stderr)?.[1],
    hint: /^Hint: (.*)$/m.exec(stderr)?.[1],
  }
}

describe('a2a send to an agent that takes JWTs of an OpenID Connect issuer', () => {
  it.each([['JSONRPC'], ['HTTP+JSON']])(
    'with --bearer <jwt> (over %s) sends it as a bearer token, and the agent answers the caller it names',
    async (binding) => {
      const token = await issuer.mint({ sub: 'carol' })
      const { code, stdout, stderr } = await send(['Hi', '--bearer', token, '--transport', binding])
      expect(stdout).toMatch(/^ {2}Hello carol: Hi$/m)
      expect(stdout).toMatch(/^State: COMPLETED$/m)
      expect(stdout + stderr).not.toContain(token)
      expect(code).toBe(0)
    },
  )

  it('--debug shows the exchange without the token', async () => {
    const token = await issuer.mint({ sub: 'erin' })
    const { code, stderr } = await send(['Hi', '--bearer', token, '--debug'])
    expect(stderr).toMatch(/^debug: → POST /m)
    expect(stderr).toContain('"authorization":"[redacted]"')
    expect(stderr).not.toContain(token)
    // Nor any piece of it a server might echo: the signature is the secret part.
    expect(stderr).not.toContain(token.split('.')[2]!)
    expect(code).toBe(0)
  })

  it('takes the JWT from A2A_BEARER_TOKEN for an agent on this machine', async () => {
    const { code, stdout } = await send(['Hi'], { A2A_BEARER_TOKEN: await issuer.mint({ sub: 'dave' }) })
    expect(stdout).toMatch(/^ {2}Hello dave: Hi$/m)
    expect(code).toBe(0)
  })

  it('without a token says the agent wants one and how to give it: A2ACLI_ERR_CREDENTIALS_MISSING, exit 4', async () => {
    const { code, errorCode, hint } = refusal(await send(['Hi']))
    expect(errorCode).toBe('A2ACLI_ERR_CREDENTIALS_MISSING')
    expect(hint).toContain('--bearer')
    expect(code).toBe(4)
  })

  it('with an expired token says the token expired (as the agent says it): A2ACLI_ERR_AUTH_FAILED, exit 4', async () => {
    const hourAgo = Math.floor(Date.now() / 1000) - 3600
    const token = await issuer.mint({ iat: hourAgo - 60, exp: hourAgo })
    const result = await send(['Hi', '--bearer', token])
    const { code, error, errorCode } = refusal(result)
    expect(errorCode).toBe('A2ACLI_ERR_AUTH_FAILED')
    expect(error).toContain('the token has expired')
    expect(result.stderr).not.toContain(token)
    expect(code).toBe(4)
  })

  it.each([
    ['meant for another agent', { aud: 'https://another.agent' }, 'the token is not meant for this agent (aud)'],
    [
      'of another issuer',
      { iss: 'https://issuer.example' },
      "the token's issuer (iss) is not the one this agent trusts",
    ],
  ])("with a token %s says so, the agent's reason as it gave it, and exits 4", async (_, claims, reason) => {
    const { code, error, errorCode } = refusal(await send(['Hi', '--bearer', await issuer.mint(claims)]))
    expect(errorCode).toBe('A2ACLI_ERR_AUTH_FAILED')
    expect(error).toContain(reason)
    expect(code).toBe(4)
  })
})
