import type { ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { storedBearer } from '../../runtime/src/cli/auth/_stored-bearer.ts'
import { cardReference } from '../../runtime/src/client/_card.ts'
import { connect } from '../../runtime/src/client/client.ts'
import type { StartedA2a } from '../_support.ts'
import { CONFIDENTIAL_CLIENT, type OAuthServer, PUBLIC_CLIENT, startOAuthServer } from '../fixtures/oauth-server.ts'
import {
  agentCardUrlOf,
  cardWith,
  commandOptions,
  deviceLogin,
  killRunning,
  startA2aCommand,
  startCardServer,
  startOidcAgent,
  storedTokensIn,
  tokenFileIn,
} from './_auth-cli.ts'

/**
 * What `a2a auth login` stored, used: `storedBearer` (what the commands attach to their calls; tested in process
 * and through `a2a send`, against a real agent of this runtime trusting the authorization server as its OIDC
 * issuer) gives the stored token, renews it with the refresh token when it expires (one renewal at a time: the
 * server rotates refresh tokens), and says to log in again when it cannot. `a2a auth status` and `logout` as
 * processes; a token file others can read is refused.
 */

let server: OAuthServer
let agent: StartedA2a
let cards: Awaited<ReturnType<typeof startCardServer>>
let home: string
let configHome: string
const running = new Set<ChildProcess>()

beforeAll(async () => {
  server = await startOAuthServer()
  agent = await startOidcAgent('a2a-auth-tokens-agent-', server)
  cards = await startCardServer({
    '/.well-known/agent-card.json': cardWith({
      robots: {
        oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: `${server.url}/token`, scopes: {} } } },
      },
    }),
  })
})

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'a2a-auth-tokens-'))
  configHome = join(home, 'config')
  vi.stubEnv('XDG_CONFIG_HOME', configHome)
  vi.stubEnv('A2ACLI_CLIENT_SECRET', undefined)
  server.setAccessTokenLifetime(300)
  server.delayRefreshes(0)
})

afterEach(() => {
  vi.unstubAllEnvs()
  vi.restoreAllMocks()
  killRunning(running)
  rmSync(home, { recursive: true, force: true })
})

afterAll(async () => {
  await agent?.dispose()
  await cards?.stop()
  await server?.stop()
})

const options = (extra: NodeJS.ProcessEnv = {}) => commandOptions({ home, configHome, running }, extra)
const a2a = (args: string[], extra: NodeJS.ProcessEnv = {}) => startA2aCommand(args, options(extra)).done
const tokenFile = () => tokenFileIn(configHome)
const storedTokens = () => storedTokensIn(configHome)
const agentCardUrl = () => agentCardUrlOf(agent.url)

async function loginToAgent(): Promise<void> {
  const { code, stderr } = await deviceLogin(
    server,
    ['--agent-card', agent.url, '--client-id', PUBLIC_CLIENT],
    options(),
  )
  expect(code, stderr).toBe(0)
}

async function robotLogin(cardRef: string): Promise<void> {
  const { code, stderr } = await a2a(
    ['auth', 'login', '--agent-card', cardRef, '--flow', 'client-credentials', '--client-id', CONFIDENTIAL_CLIENT.id],
    { A2ACLI_CLIENT_SECRET: CONFIDENTIAL_CLIENT.secret },
  )
  expect(code, stderr).toBe(0)
}

/**
 * A message to the agent through the client core, the bearer given as the commands will give it: `--bearer` or
 * A2ACLI_BEARER, else `storedBearer` of the card reference (`cardReference(ref).url`).
 */
async function greet(bearer: string | undefined): Promise<string> {
  const client = await connect({ agentCard: agent.url, ...(bearer && { bearer }) })
  const { task } = await client.sendMessage({
    message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'Hi' }] },
  })
  return task?.artifacts?.[0]?.parts[0]?.text ?? ''
}

/** What storedBearer wrote on stderr, line by line. */
function captureStderr(): () => string[] {
  let written = ''
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written += String(chunk)
    return true
  })
  return () => written.split('\n').filter(Boolean)
}

describe('storedBearer: the stored token, for later calls to the agent', () => {
  it('gives the token the device login stored for the card, and the agent accepts it', async () => {
    await expect(greet(undefined)).rejects.toMatchObject({ name: 'A2AClientFailure', kind: 'credentials-missing' })
    await loginToAgent()
    // The key a command computes from the same reference (the agent's origin) is the one login stored under.
    const bearer = await storedBearer((cardReference(agent.url) as { url: string }).url)
    expect(bearer).toBe(storedTokens()[0]!.accessToken)
    expect(await greet(bearer)).toBe('Hello alice')
    // Only for the card it was obtained for.
    expect(await storedBearer(`${cards.origin}/.well-known/agent-card.json`)).toBeUndefined()
  })

  it('renews a token within 30 s of its expiry with the refresh token, and saves the new pair (0600)', async () => {
    server.setAccessTokenLifetime(20)
    await loginToAgent()
    server.setAccessTokenLifetime(300)
    const [before] = storedTokens()
    const refreshes = server.grants.refresh_token ?? 0
    const bearer = await storedBearer(agentCardUrl())
    expect(server.grants.refresh_token).toBe(refreshes + 1)
    expect(bearer).not.toBe(before!.accessToken)
    const [after] = storedTokens()
    expect(after).toMatchObject({ cardUrl: agentCardUrl(), accessToken: bearer })
    expect(after!.refreshToken).not.toBe(before!.refreshToken)
    expect(statSync(tokenFile()).mode & 0o777).toBe(0o600)
    expect(await greet(bearer)).toBe('Hello alice')
    // Renewed for 300 s: the next call takes it as it is.
    expect(await storedBearer(agentCardUrl())).toBe(bearer)
    expect(server.grants.refresh_token).toBe(refreshes + 1)
  })

  // The server rotates refresh tokens (each works once), as OAuth 2.1 asks of public clients: two renewals with the
  // same refresh token would leave one of them refused, or the whole family revoked.
  it('two renewals at once: one refresh, and both get its token', async () => {
    server.setAccessTokenLifetime(20)
    await loginToAgent()
    server.setAccessTokenLifetime(300)
    const refreshes = server.grants.refresh_token ?? 0
    const lines = captureStderr()
    const [first, second] = await Promise.all([storedBearer(agentCardUrl()), storedBearer(agentCardUrl())])
    expect(lines()).toEqual([])
    expect(first).toBeDefined()
    expect(second).toBe(first)
    expect(server.grants.refresh_token).toBe(refreshes + 1)
    expect(storedTokens().map((token) => token.accessToken)).toEqual([first])
    expect(existsSync(`${tokenFile()}.lock`)).toBe(false)
  })

  it('a lock left behind by a command that died is taken over, and let go after the renewal', async () => {
    server.setAccessTokenLifetime(20)
    await loginToAgent()
    server.setAccessTokenLifetime(300)
    // A process id no process has (above Linux's pid_max), on this machine.
    writeFileSync(`${tokenFile()}.lock`, `${hostname()} 4194305 0123456789abcdef\n`, { mode: 0o600 })
    const bearer = await storedBearer(agentCardUrl())
    expect(bearer).toBe(storedTokens()[0]!.accessToken)
    expect(existsSync(`${tokenFile()}.lock`)).toBe(false)
  })

  it('two commands renewing the same token at once both reach the agent, with one refresh', async () => {
    server.setAccessTokenLifetime(20)
    await loginToAgent()
    server.setAccessTokenLifetime(300)
    // Both commands are in the middle of renewing while the server holds the first answer back.
    server.delayRefreshes(3_000)
    const refreshes = server.grants.refresh_token ?? 0
    const sends = await Promise.all([1, 2].map(() => a2a(['send', '--agent-card', agent.url, '-o', 'json', 'Hi'])))
    for (const { code, stdout, stderr } of sends) {
      expect(code, stderr).toBe(0)
      expect(JSON.parse(stdout).task.artifacts[0].parts[0].text).toBe('Hello alice')
    }
    expect(server.grants.refresh_token).toBe(refreshes + 1)
    expect(storedTokens()).toHaveLength(1)
  })

  it('when the refresh is refused: undefined, and one line on stderr saying to log in again', async () => {
    server.setAccessTokenLifetime(20)
    await loginToAgent()
    server.revokeRefreshTokens()
    const lines = captureStderr()
    expect(await storedBearer(agentCardUrl(), { refresh: false })).toBeUndefined()
    expect(lines()).toEqual([])
    expect(await storedBearer(agentCardUrl())).toBeUndefined()
    expect(lines()).toEqual([
      `a2a: the stored token for ${agentCardUrl()} has expired and could not be refreshed ` +
        '(The authorization server refused (HTTP 400, invalid_grant: the refresh token is not valid)): ' +
        `log in again: a2a auth login --agent-card ${agentCardUrl()}`,
    ])
  })

  it('a token file other users can read is refused, by storedBearer, status and login alike', async () => {
    await robotLogin(agent.url)
    chmodSync(tokenFile(), 0o644)
    const lines = captureStderr()
    expect(await storedBearer(agentCardUrl())).toBeUndefined()
    expect(lines()).toEqual([
      `a2a: ${tokenFile()} can be read or written by other users, so its tokens are not used: ` +
        `chmod 600 ${tokenFile()} (and log in again if others may have read it)`,
    ])
    vi.restoreAllMocks()
    for (const args of [
      ['auth', 'status'],
      ['auth', 'login', '--agent-card', agent.url, '--client-id', PUBLIC_CLIENT],
    ]) {
      const { code, stdout, stderr } = await a2a(args)
      expect(stdout).toBe('')
      expect(stderr).toBe(
        `Error: ${tokenFile()} can be read or written by other users, so its tokens are not used\n` +
          'Code: A2ACLI_ERR_INTERNAL\n' +
          `Hint: chmod 600 ${tokenFile()} (and log in again if others may have read it)\n`,
      )
      expect(code).toBe(1)
    }
    chmodSync(tokenFile(), 0o600)
    expect(await storedBearer(agentCardUrl())).toBe(storedTokens()[0]!.accessToken)
  })
})

describe('a2a auth status and logout', () => {
  it('status lists each agent with its issuer, flow, scope and expiry, never a token (text and json)', async () => {
    await loginToAgent()
    await robotLogin(cards.origin)
    const [device, robot] = storedTokens()
    const text = await a2a(['auth', 'status'])
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(
      new RegExp(
        `^Token file: ${tokenFile()}\nTokens: 2\n\nAgent card: ${agentCardUrl()}\nIssuer: ${server.url}\n` +
          'Flow: device\nClient: a2a-cli\nScope: \\(the server default\\)\nExpires: \\S+Z \\(in \\d+ s\\)\n' +
          `Refresh token: yes\n\nAgent card: ${cards.origin}/.well-known/agent-card.json\n`,
      ),
    )
    const json = await a2a(['auth', 'status', '-o', 'json'])
    expect(JSON.parse(json.stdout)).toMatchObject({
      tokenFile: tokenFile(),
      tokens: [
        { agentCard: agentCardUrl(), flow: 'device', refreshToken: true, expired: false },
        { agentCard: `${cards.origin}/.well-known/agent-card.json`, flow: 'client-credentials', refreshToken: false },
      ],
    })
    for (const output of [text.stdout, text.stderr, json.stdout, json.stderr])
      for (const secret of [device!.accessToken!, device!.refreshToken!, robot!.accessToken!])
        expect(output).not.toContain(secret)
  })

  it("logout removes one agent's tokens, and with the last one the file", async () => {
    await robotLogin(agent.url)
    await robotLogin(cards.origin)
    const first = await a2a(['auth', 'logout', '--agent-card', agent.url])
    expect(first).toMatchObject({ code: 0, stdout: `Agent card: ${agentCardUrl()}\nRemoved: 1\n` })
    expect(storedTokens().map((token) => token.cardUrl)).toEqual([`${cards.origin}/.well-known/agent-card.json`])
    expect(await storedBearer(agentCardUrl())).toBeUndefined()
    const again = await a2a(['auth', 'logout', '--agent-card', agent.url])
    expect(again.stdout).toContain('Removed: 0\n')
    const last = await a2a(['auth', 'logout', '--agent-card', cards.origin, '-o', 'json'])
    expect(JSON.parse(last.stdout)).toEqual({ agentCard: `${cards.origin}/.well-known/agent-card.json`, removed: 1 })
    expect(existsSync(tokenFile())).toBe(false)
  })

  it('logout --all removes every token', async () => {
    await robotLogin(agent.url)
    await robotLogin(cards.origin)
    expect((await a2a(['auth', 'logout', '--all'])).stdout).toBe('Agent card: (all)\nRemoved: 2\n')
    expect(existsSync(tokenFile())).toBe(false)
  })
})
