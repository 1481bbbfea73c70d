import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BEARER } from './agents.ts'
import { clientLogin, helpOf, tokenFile } from './auth.ts'
import { a2aBin, described, envelopeOf, field, type Run } from './cli.ts'
import type { Check } from './context.ts'
import { completedAnswer } from './raw-agent.ts'
import { type Doc, docOf, sentTask, stateOf } from './read.ts'

const COMPLETED = 'TASK_STATE_COMPLETED'

/** Whether a program is on PATH. */
function onPath(program: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(join(dir, program)))
}

/** Tier 3: not claimed; each requirement still observed, what the tool lacks recorded as a failure. */
export const advancedChecks: Check[] = [
  {
    id: 'A2ACLI_CARD_GET_003',
    how: "card get --extended with the guarded agent's bearer token, without one, and of an agent that has none",
    async run({ agents, run }, observe) {
      const [extended, anonymous, none] = await Promise.all([
        run(['card', 'get', '--extended', '-a', agents.guarded, '--bearer', BEARER, '-o', 'json']),
        run(['card', 'get', '--extended', '-a', agents.guarded, '-o', 'json']),
        run(['card', 'get', '--extended', '-a', agents.runtime, '-o', 'json']),
      ])
      observe.expect(
        ((docOf(extended)?.skills ?? []) as Doc[]).some((skill) => skill.id === 'more'),
        'the extended card, with the skill only it lists',
        described(extended),
      )
      observe.expect(
        anonymous.code === 4 && envelopeOf(anonymous)?.code === 'A2ACLI_ERR_CREDENTIALS_MISSING',
        'without a credential: A2ACLI_ERR_CREDENTIALS_MISSING',
        described(anonymous),
      )
      observe.expect(
        none.code === 1 && !!envelopeOf(none),
        'an agent without one: an error, not its public card',
        described(none),
      )
    },
  },
  {
    id: 'A2ACLI_AUTH_008',
    how: 'a bearer token and an API key given to a scripted agent that declares no scheme, and to one declaring bearer',
    async run({ run, raw }, observe) {
      const [open, bearer] = await Promise.all([
        raw(completedAnswer, { capabilities: {} }),
        raw(completedAnswer, {
          capabilities: {},
          securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
        }),
      ])
      await Promise.all(
        [open, bearer].map((agent) =>
          run(['send', '-a', agent.url, '--bearer', 'never-here', '--api-key', 'nor-this', 'hello']),
        ),
      )
      const carried = (request: (typeof open.requests)[number]) =>
        request.headers.authorization !== undefined ||
        request.headers['x-api-key'] !== undefined ||
        /never-here|nor-this/.test(request.url)
      observe.expect(
        open.requests.length >= 2 && !open.requests.some(carried),
        'no credential on any request to the agent declaring no scheme',
        open.requests
          .filter(carried)
          .map((request) => `${request.method} ${request.url}`)
          .join(', '),
      )
      const card = bearer.requests.find((request) => request.operation === undefined)
      const call = bearer.calls('SendMessage')[0]
      observe.expect(
        !!card && !carried(card) && call?.headers.authorization === 'Bearer never-here' && !call.headers['x-api-key'],
        'the bearer token on the call the scheme covers, not on the card request, and no API key',
        JSON.stringify({ card: card?.headers.authorization, call: call?.headers.authorization }),
      )
      if (observe.failed && open.requests.some(carried))
        return {
          status: 'fail',
          note:
            'to an agent whose card declares no security scheme, --bearer and --api-key are still sent (as ' +
            'Authorization: Bearer and X-API-Key, a choice of the client core); with declared schemes only what they ' +
            'accept is sent, and never to the card',
        }
    },
  },
  {
    id: 'A2ACLI_CARD_GET_004',
    how: "card validate --jwks on this runtime's signed card and on an unsigned one; what card get says of signatures",
    async run({ agents, run, cwd }, observe) {
      const jwks = join(cwd, 'jwks.json')
      writeFileSync(jwks, JSON.stringify(agents.jwks))
      const [signed, unsigned, shown] = await Promise.all([
        run(['card', 'validate', agents.runtime, '--jwks', jwks]),
        run(['card', 'validate', agents.plain, '--jwks', jwks]),
        run(['card', 'get', '-a', agents.runtime, '--verbose']),
      ])
      observe.expect(signed.code === 0 && /verified/.test(signed.stdout), 'the signed card verified', described(signed))
      observe.expect(
        !/\bverified\b/.test(unsigned.stdout) && /unsigned|absent/.test(unsigned.stdout),
        'the unsigned card reported unsigned, never verified',
        described(unsigned),
      )
      const reported = /^Signature/m.test(shown.stdout)
      if (!observe.failed && !reported)
        return {
          status: 'partial',
          note:
            'a2a card validate --jwks verifies the signatures (verified, unverifiable, unsigned); a2a card get ' +
            'reports no signature outcome',
        }
    },
  },
  {
    id: 'A2ACLI_CARD_GET_005',
    how: 'card get with a catalog entry as the agent card reference',
    async run({ run }, observe) {
      const entry = await run(['card', 'get', '-a', 'catalog:compliance/echo', '-o', 'json'])
      observe.expect(entry.code === 0 && !!docOf(entry)?.name, 'the entry resolved to a card', described(entry))
      if (observe.failed)
        return { status: 'fail', note: `no catalog or registry reference is resolved: ${described(entry)}` }
    },
  },
  {
    id: 'A2ACLI_PUSH_002',
    how: 'a2a --help and task push-config --help: a command receiving push notifications',
    async run({ run }, observe) {
      const [help, push] = await Promise.all([run(['--help']), run(['task', 'push-config', '--help'])])
      const receiver = /receive|listen|webhook serve|serve-webhook/i
      observe.expect(
        receiver.test(help.stdout) || receiver.test(push.stdout),
        'a command that hosts a webhook receiver',
        'none is listed',
      )
      if (observe.failed)
        return { status: 'fail', note: 'no webhook receiver: push-config registers a URL the caller must serve' }
    },
  },
  {
    id: 'A2ACLI_CHAT_001',
    how: 'a2a chat at a terminal (script): a question answered on the next line, then a new task in the same context',
    async run({ agents, run }, observe) {
      if (!onPath('script')) return { status: 'not_measured', note: 'no script(1) to give chat a terminal' }
      const command = [process.execPath, a2aBin, 'chat', '-a', agents.runtime]
      // Each line typed once chat asks for it (its `> ` prompt), as a person would; the empty line ends it.
      const lines = ['ask', 'chat-city', 'chat-again', '']
      let typed = 0
      const chat: Run = await run([], {
        limitMs: 20_000,
        keepStdin: true,
        command: ['script', ['-qec', command.map((word) => `'${word}'`).join(' '), '/dev/null']],
        watch: ({ stdout }, child) => {
          const prompts = stdout.split('> ').length - 1
          while (typed < prompts && typed < lines.length) child.stdin?.write(`${lines[typed++]}\r`)
          if (typed === lines.length) child.stdin?.end()
        },
      })
      const answer = agents.received.find((message) => message.text === 'chat-city')
      const question = agents.received.find((message) => message.text === 'ask' && message.taskId === answer?.taskId)
      const next = agents.received.find((message) => message.text === 'chat-again')
      observe.expect(!!question && !!answer, 'the second line sent to the task the first one paused', described(chat))
      observe.expect(
        !!next && next.contextId === question?.contextId && next.taskId !== question?.taskId,
        'the third line a new task in the same context',
        described(chat),
      )
      observe.expect(/Echo: chat-city/.test(chat.stdout), 'the answers shown', described(chat))
    },
  },
  {
    id: 'A2ACLI_AUTH_009',
    how: 'send --help: options for a client certificate',
    async run({ run }, observe) {
      const help = (await run(['send', '--help'])).stdout
      observe.expect(/--cert\b|--client-cert|--key\b|mtls/i.test(help), 'a client certificate option', 'none')
      if (observe.failed) return { status: 'fail', note: 'no client certificate options: mutual TLS is not supported' }
    },
  },
  {
    id: 'A2ACLI_AUTH_010',
    how: "auth login through the guarded agent's OpenID Connect scheme (discovery, client credentials); then a send",
    async run(context, observe) {
      const { agents, run } = context
      const card = await run(['card', 'get', '-a', agents.guarded])
      observe.expect(
        /^Security: .*OpenID Connect/m.test(card.stdout),
        'the card declaring OpenID Connect',
        described(card),
      )
      const login = await clientLogin(context, agents.guarded)
      const stored = existsSync(tokenFile(context))
        ? (JSON.parse(readFileSync(tokenFile(context), 'utf8')) as { tokens: Doc[] }).tokens[0]
        : undefined
      observe.expect(
        login.code === 0 && stored?.issuer === context.oauth.url,
        "a token from the issuer the card's OpenID Connect scheme names",
        described(login),
      )
      const sent = await run(['send', '-a', agents.guarded, '-o', 'json', 'oidc-send'])
      observe.expect(stateOf(sentTask(sent)) === COMPLETED, 'the send authorized by it', described(sent))
    },
  },
  {
    id: 'A2ACLI_AUTH_011',
    how: 'a task paused at AUTH_REQUIRED: reported with its Resume command and a warning, then resumed with --task-id',
    async run({ agents, run }, observe) {
      const paused = await run(['send', '-a', agents.runtime, 'auth'])
      const taskId = field(paused.stdout, 'Task')
      observe.expect(
        paused.code === 0 &&
          field(paused.stdout, 'State') === 'AUTH_REQUIRED' &&
          !!field(paused.stdout, 'Resume') &&
          /AUTH_REQUIRED/.test(paused.stderr),
        'AUTH_REQUIRED reported, with the command to resume and a warning',
        described(paused),
      )
      const resumed = await run([
        'send',
        '-a',
        agents.runtime,
        '-o',
        'json',
        '--task-id',
        taskId ?? 'none',
        'signed in',
      ])
      observe.expect(
        sentTask(resumed)?.id === taskId && stateOf(sentTask(resumed)) === COMPLETED,
        'the same task completed after the reply',
        described(resumed),
      )
    },
  },
  {
    id: 'A2ACLI_DEMO_SERVER_001',
    how: 'a2a --help and a2a demo-server --help: a demo-server command',
    async run({ run }, observe) {
      const [help, demo] = await Promise.all([run(['--help']), run(['demo-server', '--help'])])
      observe.expect(
        /^ {2}demo-server\b/m.test(help.stdout) && demo.stdout.startsWith('Usage: a2a demo-server'),
        'a demo-server command',
        described(demo),
      )
      if (observe.failed)
        return { status: 'fail', note: "no demo-server command (a2a dev serves a project's own agent, not a mock)" }
    },
  },
  {
    id: 'A2ACLI_VER_002',
    how: 'send --help: a way to declare the protocol extensions the client supports',
    async run({ run }, observe) {
      const help = (await run(['send', '--help'])).stdout
      observe.expect(
        /--extension/.test(help),
        'an option declaring extensions (A2A-Extensions)',
        helpOf(help, '--extension'),
      )
      if (observe.failed)
        return {
          status: 'fail',
          note: 'no option declares extensions; only --svc-param A2A-Extensions:<uri> sends the header by hand',
        }
    },
  },
]
