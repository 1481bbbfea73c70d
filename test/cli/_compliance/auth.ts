import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { CONFIDENTIAL_CLIENT, PUBLIC_CLIENT } from '../../fixtures/oauth-server.ts'
import { API_KEY, BEARER } from './agents.ts'
import { described, envelopeOf, type Run } from './cli.ts'
import type { Check, Context } from './context.ts'
import { completedTask } from './raw-agent.ts'
import { type Doc, sentTask, stateOf } from './read.ts'

const COMPLETED = 'TASK_STATE_COMPLETED'

/** The help line of an option: its line of `--help` and the lines that continue it. */
export function helpOf(help: string, flag: string): string {
  const lines = help.split('\n')
  const at = lines.findIndex((line) => new RegExp(`^\\s+(-\\w, )?${flag}\\b`).test(line))
  if (at < 0) return ''
  const rest = lines.slice(at + 1)
  const end = rest.findIndex((line) => /^\s+-/.test(line) || line.trim() === '')
  return [lines[at]!, ...rest.slice(0, end < 0 ? rest.length : end)].join(' ').replace(/\s+/g, ' ')
}

/** `a2a auth login` with the device flow, approving the code it prints as the user would. */
export async function deviceLogin(context: Context, agent: string): Promise<Run> {
  let approving: Promise<unknown> | undefined
  return context.run(['auth', 'login', '--agent-card', agent, '--client-id', PUBLIC_CLIENT], {
    limitMs: 25_000,
    watch: ({ stderr }) => {
      const code = /^User code: (\S+)$/m.exec(stderr)?.[1]
      if (code && !approving) approving = fetch(`${context.oauth.url}/approve?user_code=${code}`)
    },
  })
}

/** `a2a auth login` with the client credentials flow, the secret from A2ACLI_CLIENT_SECRET. */
export const clientLogin = (context: Context, agent: string, ...flags: string[]) =>
  context.run(
    [
      'auth',
      'login',
      '--agent-card',
      agent,
      '--flow',
      'client-credentials',
      '--client-id',
      CONFIDENTIAL_CLIENT.id,
      ...flags,
    ],
    {
      env: { A2ACLI_CLIENT_SECRET: CONFIDENTIAL_CLIENT.secret },
    },
  )

/** The tokens `auth login` stored under the check's configuration folder. */
export const tokenFile = (context: Context) => join(context.configHome, 'a2a-cli', 'tokens.json')

/** A send with no credential given, that a stored token must authorize; who the agent saw. */
async function sendWithStoredToken(context: Context, text: string) {
  const sent = await context.run(['send', '-a', context.agents.guarded, '-o', 'json', text])
  const taskId = sentTask(sent)?.id
  return { sent, subject: context.agents.received.find((message) => message.taskId === taskId)?.subject }
}

/** Credentials: given, from the environment, stored by a login; attached as the card says; never shown. */
export const authChecks: Check[] = [
  {
    id: 'A2ACLI_AUTH_001',
    how: '--bearer, A2ACLI_BEARER, --api-key, A2ACLI_API_KEY to the guarded agent; an API key in a query; --svc-param',
    async run({ agents, run, raw }, observe) {
      const guarded = (flags: string[], env: Record<string, string> = {}) =>
        run(['send', '-a', agents.guarded, '-o', 'json', ...flags, 'hello'], { env })
      const runs = await Promise.all([
        guarded(['--bearer', BEARER]),
        guarded([], { A2ACLI_BEARER: BEARER }),
        guarded(['--api-key', API_KEY]),
        guarded([], { A2ACLI_API_KEY: API_KEY }),
      ])
      for (const [index, how] of ['--bearer', 'A2ACLI_BEARER', '--api-key', 'A2ACLI_API_KEY'].entries())
        observe.expect(
          stateOf(sentTask(runs[index]!)) === COMPLETED,
          `the guarded agent to take the credential from ${how}`,
          described(runs[index]!),
        )
      const none = await guarded([])
      observe.expect(
        none.code === 4 &&
          envelopeOf(none)?.code === 'A2ACLI_ERR_CREDENTIALS_MISSING' &&
          /--bearer/.test(envelopeOf(none)?.hint ?? ''),
        'no credential: A2ACLI_ERR_CREDENTIALS_MISSING, a hint naming the flag the card asks for',
        described(none),
      )
      const queried = await raw(() => ({ result: { task: completedTask('q1') } }), {
        capabilities: {},
        securitySchemes: { key: { apiKeySecurityScheme: { location: 'query', name: 'key' } } },
      })
      await run(['send', '-a', queried.url, '--api-key', 'in-the-query', '--svc-param', 'X-Trace-Id:trace-42', 'hello'])
      const [call] = queried.calls('SendMessage')
      observe.expect(
        new URL(call?.url ?? '/', 'http://raw').searchParams.get('key') === 'in-the-query' &&
          !call?.headers['x-api-key'],
        "the API key in the query parameter the card's scheme names",
        call?.url ?? 'no call',
      )
      observe.expect(
        call?.headers['x-trace-id'] === 'trace-42',
        '--svc-param as a request header',
        JSON.stringify(call?.headers),
      )
      const help = (await run(['send', '--help'])).stdout
      // Its description, after the flag and its `<key:value>` placeholder.
      const svcParam = helpOf(help, '--svc-param').replace(/^\s*--svc-param <[^>]*>/, '')
      observe.expect(
        svcParam.trim() !== '' && !/auth|credential|token|secret|api key|bearer/i.test(svcParam),
        '--svc-param documented as a service parameter, not as a credential',
        helpOf(help, '--svc-param'),
      )
    },
  },
  {
    id: 'A2ACLI_AUTH_002',
    how: "each credential flag's help: its variable, the process list and shell history warning; flag over env",
    async run({ agents, run }, observe) {
      const [send, login] = await Promise.all([run(['send', '--help']), run(['auth', 'login', '--help'])])
      for (const [help, flag, variable] of [
        [send.stdout, '--bearer', 'A2ACLI_BEARER'],
        [send.stdout, '--api-key', 'A2ACLI_API_KEY'],
        [login.stdout, '--client-secret', 'A2ACLI_CLIENT_SECRET'],
      ] as const) {
        const line = helpOf(help, flag)
        observe.expect(line.includes(variable), `${flag}'s help to name ${variable}`, line || '(no such option)')
        observe.expect(/process/i.test(line), `${flag}'s help to say a flag's value shows in the process list`, line)
        observe.expect(/history/i.test(line), `${flag}'s help to say it stays in the shell's history`, line)
      }
      const [flagWins, envAlone] = await Promise.all([
        run(['send', '-a', agents.guarded, '-o', 'json', '--bearer', 'wrong', 'hello'], {
          env: { A2ACLI_BEARER: BEARER },
        }),
        run(['send', '-a', agents.guarded, '-o', 'json', 'hello'], { env: { A2ACLI_BEARER: BEARER } }),
      ])
      observe.expect(
        envelopeOf(flagWins)?.code === 'A2ACLI_ERR_AUTH_FAILED' && stateOf(sentTask(envAlone)) === COMPLETED,
        'the flag to win over A2ACLI_BEARER (a wrong flag refused, the variable alone taken)',
        `${described(flagWins)}; ${described(envAlone)}`,
      )
    },
  },
  {
    id: 'A2ACLI_AUTH_003',
    how: 'a bearer token to an agent with a self-signed certificate: refused without --insecure, sent with a warning',
    async run({ run, raw, tls }, observe) {
      if (!tls) return { status: 'not_measured', note: 'openssl could not make a certificate for the TLS agent' }
      const secure = await raw(() => ({ result: { task: completedTask('s1') } }), {
        tls,
        capabilities: {},
        securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
      })
      const checked = await run(['send', '-a', secure.url, '--bearer', 'tls-secret', 'hello'])
      observe.expect(
        checked.code === 3 && /A2ACLI_ERR_UNREACHABLE/.test(checked.stderr) && secure.requests.length === 0,
        'the certificate refused (A2ACLI_ERR_UNREACHABLE, exit 3), nothing sent',
        `${described(checked)}; ${secure.requests.length} request(s) received`,
      )
      const skipped = await run(['send', '-a', secure.url, '--bearer', 'tls-secret', '--insecure', 'hello'])
      observe.expect(
        skipped.code === 0 && /^Warning: --insecure: TLS certificates are not checked/m.test(skipped.stderr),
        'with --insecure: the answer, and a warning on stderr',
        described(skipped),
      )
      observe.expect(
        secure.calls('SendMessage')[0]?.headers.authorization === 'Bearer tls-secret',
        'the credential sent over the unverified connection (what the warning is for)',
        JSON.stringify(secure.calls('SendMessage')[0]?.headers.authorization),
      )
    },
  },
  {
    id: 'A2ACLI_AUTH_004',
    how: '--debug --verbose with a bearer token, an API key, A2ACLI_BEARER and a secret --svc-param: none shown',
    async run({ agents, run }, observe) {
      const runs = await Promise.all([
        run(['send', '-a', agents.guarded, '--debug', '--verbose', '--bearer', BEARER, 'hello']),
        run(['send', '-a', agents.guarded, '--debug', '--verbose', '--api-key', API_KEY, 'hello']),
        run(['send', '-a', agents.guarded, '--debug', '--verbose', '-o', 'json', 'hello'], {
          env: { A2ACLI_BEARER: BEARER },
        }),
        run([
          'send',
          '-a',
          agents.guarded,
          '--debug',
          '--bearer',
          BEARER,
          '--svc-param',
          'X-Secret-Token:svc-secret-91',
          'hello',
        ]),
        run(['config', 'show'], { env: { A2ACLI_BEARER: BEARER, A2ACLI_SVC_PARAM: 'X-Secret-Token:svc-secret-91' } }),
      ])
      const sources = ['--bearer', '--api-key', 'A2ACLI_BEARER', '--svc-param', 'config show']
      runs.forEach((each, index) => {
        const said = each.stdout + each.stderr
        observe.expect(
          (index === 4 || (each.code === 0 && /^debug: /m.test(each.stderr))) &&
            ![BEARER, API_KEY, 'svc-secret-91'].some((secret) => said.includes(secret)),
          `${sources[index]}: diagnostics without the secret`,
          described(each),
        )
      })
    },
  },
  {
    id: 'A2ACLI_AUTH_005',
    how: "auth login's device flow through the guarded agent's card; the stored token then authorizes a send",
    async run(context, observe) {
      const login = await deviceLogin(context, context.agents.guarded)
      observe.expect(
        login.code === 0 && /Flow: device/.test(login.stdout),
        'the device login to succeed',
        described(login),
      )
      const { sent, subject } = await sendWithStoredToken(context, 'after-device-login')
      observe.expect(
        stateOf(sentTask(sent)) === COMPLETED && subject === 'alice',
        'the send authorized as alice',
        described(sent),
      )
    },
  },
  {
    id: 'A2ACLI_AUTH_006',
    how: "auth login's client credentials flow; the stored token then authorizes a send",
    async run(context, observe) {
      const login = await clientLogin(context, context.agents.guarded)
      observe.expect(
        login.code === 0 && /Flow: client-credentials/.test(login.stdout),
        'the login to succeed',
        described(login),
      )
      const { sent, subject } = await sendWithStoredToken(context, 'after-client-login')
      observe.expect(
        stateOf(sentTask(sent)) === COMPLETED && subject === CONFIDENTIAL_CLIENT.id,
        `the send authorized as the client (${CONFIDENTIAL_CLIENT.id})`,
        `${described(sent)}, subject ${subject}`,
      )
    },
  },
  {
    id: 'A2ACLI_AUTH_007',
    how: 'the token file after a login (0600 in a 0700 folder, the token never printed); a later send carries it',
    async run(context, observe) {
      const before = await sendWithStoredToken(context, 'before-login')
      observe.expect(
        envelopeOf(before.sent)?.code === 'A2ACLI_ERR_CREDENTIALS_MISSING',
        'no token before the login',
        described(before.sent),
      )
      const login = await clientLogin(context, context.agents.guarded)
      const file = tokenFile(context)
      observe.expect(existsSync(file), 'a token file', described(login))
      if (!existsSync(file)) return
      observe.expect(
        (statSync(file).mode & 0o777) === 0o600,
        'the file readable by its owner alone (0600)',
        (statSync(file).mode & 0o777).toString(8),
      )
      observe.expect(
        (statSync(join(file, '..')).mode & 0o777) === 0o700,
        'its folder 0700',
        (statSync(join(file, '..')).mode & 0o777).toString(8),
      )
      const stored = (JSON.parse(readFileSync(file, 'utf8')) as { tokens: Doc[] }).tokens[0]
      const after = await sendWithStoredToken(context, 'after-login')
      observe.expect(
        stateOf(sentTask(after.sent)) === COMPLETED,
        'the next send authorized by the stored token',
        described(after.sent),
      )
      observe.expect(
        !!stored?.accessToken &&
          !(login.stdout + login.stderr + after.sent.stdout + after.sent.stderr).includes(stored.accessToken),
        'the token never printed',
        'printed',
      )
    },
  },
]
