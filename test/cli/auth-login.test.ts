import type { ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { TEST_AUDIENCE } from '../_oidc-issuer.ts'
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
 * `a2a auth login` as a process: it finds the authorization server from the agent's card (or --issuer), runs the
 * device code flow (the test plays the user, approving the code the CLI printed on stderr) or the client
 * credentials flow against a real authorization server on 127.0.0.1, and stores the token in a file only its user
 * can read. Failures are the CLI's error envelope with the exit status of their code.
 */

let server: OAuthServer
let agent: StartedA2a
let cards: Awaited<ReturnType<typeof startCardServer>>
const cardPaths: Record<string, unknown> = {}
let home: string
let configHome: string
const running = new Set<ChildProcess>()

beforeAll(async () => {
  server = await startOAuthServer()
  agent = await startOidcAgent('a2a-auth-login-agent-', server)
  cards = await startCardServer(cardPaths)
})

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'a2a-auth-login-'))
  configHome = join(home, 'config')
})

afterEach(() => {
  killRunning(running)
  rmSync(home, { recursive: true, force: true })
})

afterAll(async () => {
  await agent?.dispose()
  await cards?.stop()
  await server?.stop()
})

const options = (extra: NodeJS.ProcessEnv = {}, limitMs?: number) =>
  commandOptions({ home, configHome, running }, extra, limitMs)
const tokenFile = () => tokenFileIn(configHome)
const storedTokens = () => storedTokensIn(configHome)
const agentCardUrl = () => agentCardUrlOf(agent.url)

/** The `Error:`/`Code:`/`Hint:` lines on stderr, and no stack. */
function failure(stderr: string) {
  expect(stderr).not.toMatch(/^\s+at /m)
  return {
    error: /^Error: (.*)$/m.exec(stderr)?.[1],
    code: /^Code: (.*)$/m.exec(stderr)?.[1],
    hint: /^Hint: (.*)$/m.exec(stderr)?.[1],
  }
}

describe('a2a auth login, device code flow (RFC 8628)', () => {
  it("finds the server through this runtime's card (OpenID discovery), prints the code, stores the token 0600", async () => {
    const polled = server.polls.length
    const { code, stdout, stderr } = await deviceLogin(
      server,
      ['--agent-card', agent.url, '--client-id', PUBLIC_CLIENT],
      options(),
    )
    expect(code).toBe(0)
    expect(stderr).toMatch(new RegExp(`^Verification URL: ${server.url}/device\\?user_code=\\S+$`, 'm'))
    expect(stdout).toContain(`Agent card: ${agentCardUrl()}\n`)
    expect(stdout).toContain(`Issuer: ${server.url}\nFlow: device\n`)
    expect(stdout).toContain(`Token file: ${tokenFile()}\n`)
    // Only its user may read the file or enter the folder; the file holds the agent's token and a refresh token.
    expect(statSync(tokenFile()).mode & 0o777).toBe(0o600)
    expect(statSync(join(configHome, 'a2a-cli')).mode & 0o777).toBe(0o700)
    const [stored] = storedTokens()
    expect(stored).toMatchObject({ cardUrl: agentCardUrl(), issuer: server.url, flow: 'device' })
    expect(stored!.refreshToken).toEqual(expect.any(String))
    expect(await server.verify(stored!.accessToken!)).toMatchObject({ sub: 'alice', aud: TEST_AUDIENCE })
    expect(stdout + stderr).not.toContain(stored!.accessToken)
    expect(stdout + stderr).not.toContain(stored!.refreshToken)
    // Polled at the server's pace (1 s) while the test approved: a few polls, not a loop.
    expect(server.polls.length - polled).toBeLessThanOrEqual(3)
  })

  it('honours slow_down: every later poll waits 5 s more, and it still logs in', { timeout: 40_000 }, async () => {
    const first = server.polls.length
    server.slowDown(1)
    const { code } = await deviceLogin(
      server,
      ['--agent-card', agent.url, '--client-id', PUBLIC_CLIENT],
      options({}, 30_000),
    )
    expect(code).toBe(0)
    const polls = server.polls.slice(first)
    // The first poll is told to slow down (approved already by then), the second one gets the token.
    expect(polls).toHaveLength(2)
    expect(polls[1]! - polls[0]!).toBeGreaterThanOrEqual(5_900)
  })

  // Exit 5 is --timeout's alone: an expired user code is a login that did not happen, as a denied one.
  it('gives up when the code expires unapproved: A2ACLI_ERR_AUTH_FAILED, exit 4, nothing stored', async () => {
    const short = await startOAuthServer({ deviceCodeLifetime: 3 })
    try {
      const login = startA2aCommand(
        ['auth', 'login', '--agent-card', agent.url, '--issuer', short.url, '--client-id', PUBLIC_CLIENT],
        options(),
      )
      await login.stderrMatch(/^User code: \S+$/m)
      const { code, stderr } = await login.done
      expect(failure(stderr)).toEqual({
        error: 'The user code expired (after 3 s) before the login was approved',
        code: 'A2ACLI_ERR_AUTH_FAILED',
        hint: 'run a2a auth login again and approve it at the verification URL in time',
      })
      expect(code).toBe(4)
      expect(short.polls.length).toBeLessThanOrEqual(3)
      expect(existsSync(tokenFile())).toBe(false)
    } finally {
      await short.stop()
    }
  })

  it('a denied login is A2ACLI_ERR_AUTH_FAILED, exit 4', async () => {
    const login = startA2aCommand(
      ['auth', 'login', '--agent-card', agent.url, '--client-id', PUBLIC_CLIENT, '-o', 'json'],
      options(),
    )
    const [, userCode] = await login.stderrMatch(/^User code: (\S+)$/m)
    expect(server.deny(userCode!)).toBe(true)
    const { code, stdout } = await login.done
    expect(JSON.parse(stdout)).toEqual({
      error: {
        code: 'A2ACLI_ERR_AUTH_FAILED',
        message: 'The login was denied at the verification URL',
        hint: 'run a2a auth login again and approve it',
        a2aCode: null,
      },
    })
    expect(code).toBe(4)
  })

  it("uses an oauth2 scheme's deviceCode flow and asks for the scopes the card requires", async () => {
    cardPaths['/device/.well-known/agent-card.json'] = cardWith(
      {
        oauth: {
          oauth2SecurityScheme: {
            flows: {
              deviceCode: {
                deviceAuthorizationUrl: `${server.url}/device_authorization`,
                tokenUrl: `${server.url}/token`,
                scopes: { 'tasks.read': 'read', 'tasks.write': 'write' },
              },
            },
            oauth2MetadataUrl: `${server.url}/.well-known/oauth-authorization-server`,
          },
        },
      },
      [{ schemes: { oauth: { list: ['tasks.write'] } } }],
    )
    const cardUrl = `${cards.origin}/device/.well-known/agent-card.json`
    const { code, stdout } = await deviceLogin(server, ['--agent-card', cardUrl, '--client-id', PUBLIC_CLIENT], {
      ...options(),
    })
    expect(code).toBe(0)
    expect(server.scopesAsked.at(-1)).toBe('tasks.write')
    expect(stdout).toContain(`Agent card: ${cardUrl}\nIssuer: ${server.url}\nFlow: device\nClient: a2a-cli\n`)
    expect(stdout).toContain('Scope: tasks.write\n')
    expect(storedTokens()[0]).toMatchObject({ cardUrl, scope: 'tasks.write' })
  })
})

describe('a2a auth login, client credentials flow', () => {
  const clientCard = () =>
    cardWith({
      robots: {
        oauth2SecurityScheme: {
          flows: { clientCredentials: { tokenUrl: `${server.url}/token`, scopes: { 'agent.call': 'call' } } },
        },
      },
    })

  it('gets a token in one call, the secret from A2ACLI_CLIENT_SECRET, and prints json without the token', async () => {
    cardPaths['/robots/.well-known/agent-card.json'] = clientCard()
    const cardUrl = `${cards.origin}/robots/.well-known/agent-card.json`
    const before = server.grants.client_credentials ?? 0
    const login = startA2aCommand(
      ['auth', 'login', '--agent-card', cardUrl, '--client-id', CONFIDENTIAL_CLIENT.id, '-o', 'json'],
      options({ A2ACLI_CLIENT_SECRET: CONFIDENTIAL_CLIENT.secret }),
    )
    const { code, stdout } = await login.done
    expect(code).toBe(0)
    expect(server.grants.client_credentials).toBe(before + 1)
    const printed = JSON.parse(stdout)
    expect(printed).toMatchObject({
      agentCard: cardUrl,
      issuer: `${server.url}/token`,
      flow: 'client-credentials',
      scope: 'agent.call',
      refreshToken: false,
      tokenFile: tokenFile(),
    })
    const [stored] = storedTokens()
    expect(stdout).not.toContain(stored!.accessToken)
    expect(await server.verify(stored!.accessToken!)).toMatchObject({ sub: 'robot', scope: 'agent.call' })
    expect(statSync(tokenFile()).mode & 0o777).toBe(0o600)
  })

  it('reads the card as every command does: with A2A-Version and no credential', async () => {
    cardPaths['/versioned/.well-known/agent-card.json'] = clientCard()
    const cardUrl = `${cards.origin}/versioned/.well-known/agent-card.json`
    const { code, stderr } = await startA2aCommand(
      ['auth', 'login', '--agent-card', cardUrl, '--client-id', CONFIDENTIAL_CLIENT.id],
      options({ A2ACLI_CLIENT_SECRET: CONFIDENTIAL_CLIENT.secret }),
    ).done
    expect(code, stderr).toBe(0)
    const read = cards.requests.filter((request) => request.path === '/versioned/.well-known/agent-card.json')
    expect(read).toHaveLength(1)
    expect(read[0]!.headers).toMatchObject({ 'a2a-version': '1.0' })
    expect(read[0]!.headers.authorization).toBeUndefined()
  })

  const configured = {
    A2ACLI_CLIENT_ID: CONFIDENTIAL_CLIENT.id,
    A2ACLI_CLIENT_SECRET: CONFIDENTIAL_CLIENT.secret,
    A2ACLI_FLOW: 'client-credentials',
  }

  it('its settings are listed by a2a config show, the secret redacted', async () => {
    const shown = await startA2aCommand(['config', 'show', '-o', 'json'], options(configured)).done
    expect(shown.code, shown.stderr).toBe(0)
    expect(JSON.parse(shown.stdout).options).toEqual(
      expect.arrayContaining([
        { option: '--client-id', variable: 'A2ACLI_CLIENT_ID', value: 'robot', source: 'env A2ACLI_CLIENT_ID' },
        {
          option: '--client-secret',
          variable: 'A2ACLI_CLIENT_SECRET',
          value: '[redacted]',
          source: 'env A2ACLI_CLIENT_SECRET',
        },
        { option: '--flow', variable: 'A2ACLI_FLOW', value: 'client-credentials', source: 'env A2ACLI_FLOW' },
        { option: '--issuer', variable: 'A2ACLI_ISSUER', value: null, source: 'default' },
        { option: '--scope', variable: 'A2ACLI_SCOPE', value: null, source: 'default' },
      ]),
    )
    expect(shown.stdout).not.toContain(CONFIDENTIAL_CLIENT.secret)
  })

  it('its settings resolve as the other commands do: --help says where from, --config names the file', async () => {
    const help = await startA2aCommand(['auth', 'login', '--help'], options(configured)).done
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('(now "robot", from env A2ACLI_CLIENT_ID)')
    expect(help.stdout).not.toContain(CONFIDENTIAL_CLIENT.secret)
    // The same settings from the file --config names (a file holding a secret is readable by its owner alone).
    cardPaths['/configured/.well-known/agent-card.json'] = clientCard()
    const cardUrl = `${cards.origin}/configured/.well-known/agent-card.json`
    const file = join(home, 'robot.env')
    const lines = Object.entries({ ...configured, A2ACLI_AGENT_CARD: cardUrl, A2ACLI_OUTPUT: 'json' })
    writeFileSync(file, lines.map(([key, value]) => `${key}=${JSON.stringify(value)}\n`).join(''), { mode: 0o600 })
    const login = await startA2aCommand(['auth', 'login', '--config', file], options()).done
    expect(login.code, login.stderr).toBe(0)
    expect(JSON.parse(login.stdout)).toMatchObject({
      agentCard: cardUrl,
      clientId: 'robot',
      flow: 'client-credentials',
    })
  })

  it('reads the card from a file, and keeps the token under its file: URL', async () => {
    writeFileSync(join(home, 'card.json'), JSON.stringify(clientCard()))
    const login = startA2aCommand(
      ['auth', 'login', '--agent-card', './card.json', '--client-id', CONFIDENTIAL_CLIENT.id],
      options({ A2ACLI_CLIENT_SECRET: CONFIDENTIAL_CLIENT.secret }),
    )
    const { code, stdout } = await login.done
    expect(code).toBe(0)
    const cardUrl = pathToFileURL(join(home, 'card.json')).href
    expect(stdout).toContain(`Agent card: ${cardUrl}\n`)
    expect(storedTokens()[0]).toMatchObject({ cardUrl, flow: 'client-credentials' })
  })

  it("through the card's OpenID Connect scheme with --flow client-credentials and --client-secret", async () => {
    const login = startA2aCommand(
      [
        'auth',
        'login',
        '--agent-card',
        agent.url,
        '--flow',
        'client-credentials',
        '--client-id',
        CONFIDENTIAL_CLIENT.id,
        '--client-secret',
        CONFIDENTIAL_CLIENT.secret,
        '--scope',
        'a b',
        'c',
      ],
      options(),
    )
    const { code, stdout } = await login.done
    expect(code).toBe(0)
    expect(stdout).toContain('Flow: client-credentials\n')
    expect(server.scopesAsked.at(-1)).toBe('a b c')
    expect(storedTokens()[0]).toMatchObject({ cardUrl: agentCardUrl(), issuer: server.url })
  })

  it('a wrong secret is A2ACLI_ERR_AUTH_FAILED with exit 4, and nothing is stored', async () => {
    cardPaths['/robots/.well-known/agent-card.json'] = clientCard()
    const login = startA2aCommand(
      ['auth', 'login', '--agent-card', `${cards.origin}/robots/`, '--client-id', CONFIDENTIAL_CLIENT.id],
      options({ A2ACLI_CLIENT_SECRET: 'wrong' }),
    )
    const { code, stderr } = await login.done
    expect(failure(stderr)).toEqual({
      error: "The token endpoint refused the client's credentials (HTTP 401)",
      code: 'A2ACLI_ERR_AUTH_FAILED',
      hint: 'check --client-id and --client-secret (or A2ACLI_CLIENT_SECRET)',
    })
    expect(code).toBe(4)
    expect(existsSync(tokenFile())).toBe(false)
  })
})

describe('a2a auth login refuses what it cannot do, in one line with the exit status of its code', () => {
  it.each([
    ['no client id', ['--agent-card', 'AGENT'], {}, 2, 'A2ACLI_ERR_USAGE'],
    ['an unknown flow', ['--agent-card', 'AGENT', '--client-id', 'x', '--flow', 'password'], {}, 2, 'A2ACLI_ERR_USAGE'],
    [
      'client credentials without a secret',
      ['--agent-card', 'AGENT', '--client-id', 'x', '--flow', 'client-credentials'],
      {},
      2,
      'A2ACLI_ERR_USAGE',
    ],
    [
      'an agent nobody serves',
      ['--agent-card', 'http://127.0.0.1:9/', '--client-id', 'x'],
      {},
      3,
      'A2ACLI_ERR_UNREACHABLE',
    ],
  ])('%s', async (_, args, extra, status, code) => {
    const resolved = args.map((arg) => (arg === 'AGENT' ? agent.url : arg))
    const result = await startA2aCommand(['auth', 'login', ...resolved], options(extra)).done
    expect(failure(result.stderr).code).toBe(code)
    expect(result.code).toBe(status)
  })

  it('a card without an OAuth scheme says to name the server with --issuer; with it, the login works', async () => {
    cardPaths['/plain/.well-known/agent-card.json'] = cardWith({ key: { apiKeySecurityScheme: { name: 'x-api-key' } } })
    const cardUrl = `${cards.origin}/plain/.well-known/agent-card.json`
    const refused = await startA2aCommand(
      ['auth', 'login', '--agent-card', cardUrl, '--client-id', PUBLIC_CLIENT],
      options(),
    ).done
    expect(failure(refused.stderr)).toEqual({
      error: 'The agent card declares no OAuth 2.0 or OpenID Connect security scheme',
      code: 'A2ACLI_ERR_USAGE',
      hint: 'name the authorization server with --issuer <url>',
    })
    expect(refused.code).toBe(2)
    const { code, stdout } = await deviceLogin(
      server,
      ['--agent-card', cardUrl, '--issuer', server.url, '--client-id', PUBLIC_CLIENT],
      options(),
    )
    expect(code).toBe(0)
    expect(stdout).toContain(`Agent card: ${cardUrl}\nIssuer: ${server.url}\nFlow: device\n`)
  })

  it('a card naming an authorization server in plain http elsewhere than this machine is refused; --issuer gets around it', async () => {
    cardPaths['/clear/.well-known/agent-card.json'] = cardWith({
      oidc: {
        openIdConnectSecurityScheme: { openIdConnectUrl: 'http://issuer.example/.well-known/openid-configuration' },
      },
    })
    const { code, stderr } = await startA2aCommand(
      ['auth', 'login', '--agent-card', `${cards.origin}/clear/.well-known/agent-card.json`, '--client-id', 'x'],
      options(),
    ).done
    expect(failure(stderr)).toMatchObject({
      error:
        "the card's securitySchemes.oidc.openIdConnectSecurityScheme.openIdConnectUrl must be an absolute https: URL " +
        '(http: only on this machine) (got "http://issuer.example/.well-known/openid-configuration")',
      code: 'A2ACLI_ERR_CARD_INVALID',
    })
    expect(code).toBe(1)
    const overridden = await deviceLogin(
      server,
      ['--agent-card', `${cards.origin}/clear/`, '--issuer', server.url, '--client-id', PUBLIC_CLIENT],
      options(),
    )
    expect(overridden.code, overridden.stderr).toBe(0)
  })

  it('--help says a secret on the command line is visible in the process list', async () => {
    const { code, stdout } = await startA2aCommand(['auth', 'login', '--help'], options()).done
    expect(code).toBe(0)
    expect(stdout.replace(/\s+/g, ' ')).toContain(
      'prefer A2ACLI_CLIENT_SECRET: other users of this machine can read a command line in the process list',
    )
  })
})
