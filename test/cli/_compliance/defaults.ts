import { described, field } from './cli.ts'
import type { Check } from './context.ts'
import { docOf, sentTask, stateOf } from './read.ts'
import type { DefaultKey } from './requirements.ts'
import type { DefaultRow } from './summary.ts'

/** The DEFAULT_001 breakdown as its check found it (COMPLIANCE.md §4a): each default seen in use, then overridden. */
const rows: Partial<Record<DefaultKey, DefaultRow>> = {}

export const breakdown = (): Partial<Record<DefaultKey, DefaultRow>> => ({ ...rows })

/** Runs both halves of a row's evidence: the default as shipped, and a flag overriding it. */
function row(key: DefaultKey, shipped: boolean, overridable: boolean, note: string | null): boolean {
  rows[key] = { shipped, overridable, note }
  return shipped && overridable
}

export const defaultChecks: Check[] = [
  {
    id: 'A2ACLI_DEFAULT_001',
    how: 'each baseline default seen in use and overridden by its flag; send --help shows the defaults',
    async run({ agents, run, raw, tls }, observe) {
      const completed = { result: { task: { id: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } } } }
      const recorder = () =>
        raw(() => completed, { interfaces: [{ binding: 'HTTP+JSON' }, { binding: 'JSONRPC' }], capabilities: {} })
      const [cardOrder, preference, versionAsked] = await Promise.all([recorder(), recorder(), recorder()])
      const [plain, preferred, slow, early, text, json, concise, verbose, version, help] = await Promise.all([
        run(['send', '-a', cardOrder.url, 'hello']),
        run(['send', '-a', preference.url, '--transport', 'JSONRPC', 'hello']),
        run(['send', '-a', agents.runtime, '-o', 'json', 'slow']),
        run(['send', '-a', agents.runtime, '-o', 'json', '--async', 'slow']),
        run(['send', '-a', agents.runtime, 'hello']),
        run(['send', '-a', agents.runtime, '-o', 'json', 'hello']),
        run(['send', '-a', agents.runtime, 'parts']),
        run(['send', '-a', agents.runtime, '--verbose', 'parts']),
        run(['send', '-a', versionAsked.url, '--a2a-version', '1.0', 'hello']),
        run(['send', '--help']),
      ])
      const paths = (agent: typeof cardOrder) => agent.calls().map((call) => call.url)
      const byRest = paths(cardOrder).length > 0 && paths(cardOrder).every((path) => path.startsWith('/rest/'))
      const viaRpc = paths(preference).length > 0 && paths(preference).every((path) => path === '/rpc')
      observe.expect(
        row('transport_server_preference_order', byRest, viaRpc, null),
        "the card's first interface (HTTP+JSON) by default and JSON-RPC with --transport JSONRPC",
        `${paths(cardOrder).join(', ')} then ${paths(preference).join(', ')} ` +
          `(${described(plain)}; ${described(preferred)})`,
      )
      const waited = stateOf(sentTask(slow)) === 'TASK_STATE_COMPLETED'
      const returned = early.code === 0 && stateOf(sentTask(early)) !== 'TASK_STATE_COMPLETED'
      observe.expect(
        row('task_completion_wait_by_default', waited, returned, null),
        'send to wait for the task by default, and --async not to',
        `${described(slow)}; ${described(early)}`,
      )
      const isText = field(text.stdout, 'State') === 'COMPLETED'
      const isJson = docOf(json)?.task !== undefined
      observe.expect(
        row('output_human_readable_text', isText, isJson, null),
        'Label: value text by default, and -o json',
        `${described(text)}; ${described(json)}`,
      )
      const isConcise = concise.code === 0 && !/^\s*Part: /m.test(concise.stdout)
      const isVerbose = /^\s*Part: text \(/m.test(verbose.stdout)
      observe.expect(
        row(
          'detail_level_concise',
          isConcise,
          isVerbose,
          'parts collapsed by default; --verbose heads each with its kind and type',
        ),
        'no per-part detail by default, and Part: lines with --verbose',
        `${described(concise)}; ${described(verbose)}`,
      )
      const headers = [cardOrder, versionAsked].flatMap((agent) =>
        agent.requests.map((request) => request.headers['a2a-version']),
      )
      const versioned = headers.length > 0 && headers.every((value) => value === '1.0')
      observe.expect(
        row(
          'protocol_version_highest_mutual',
          versioned,
          version.code === 0,
          '1.0, the only version this client speaks; --a2a-version takes 1.x',
        ),
        'A2A-Version 1.0 on every request, and --a2a-version accepted',
        `${JSON.stringify(headers)} (${described(version)})`,
      )
      if (!tls) {
        row('transport_security_tls_on', false, false, 'not measured: openssl could not make a certificate')
        observe.expect(false, 'a TLS agent to check certificate verification against', 'openssl is not available')
      } else {
        const secure = await raw(
          () => ({ result: { task: { id: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } } } }),
          { tls, capabilities: {} },
        )
        const checked = await run(['send', '-a', secure.url, 'hello'])
        const verifies = checked.code === 3 && secure.requests.length === 0
        const skipped = await run(['send', '-a', secure.url, '--insecure', 'hello'])
        const overridden = skipped.code === 0 && /^Warning: --insecure/m.test(skipped.stderr)
        observe.expect(
          row(
            'transport_security_tls_on',
            verifies,
            overridden,
            'a self-signed certificate is refused; --insecure warns on stderr',
          ),
          'a self-signed certificate refused by default, and accepted with a warning under --insecure',
          `${described(checked)}; ${described(skipped)}`,
        )
      }
      // commander wraps long lines: read the help as one line.
      const helpText = help.stdout.replace(/\s+/g, ' ')
      for (const shown of ['default: "text"', 'default: "2s"', 'default: "1.0"', "default: the card's order"])
        observe.expect(helpText.includes(shown), `send --help to show (${shown})`, described(help))
    },
  },
]
