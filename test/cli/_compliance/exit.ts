import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { described, envelopeOf, type Run } from './cli.ts'
import type { Check } from './context.ts'
import { task } from './raw-agent.ts'
import { sentTask, stateOf } from './read.ts'
import { ERROR_CODES } from './requirements.ts'

/** The exit status a failure's code stands for: its registered status, 1 for an A2A error. */
const statusFor = (code: string) => ERROR_CODES[code] ?? 1

/** Exit statuses: what the CLI did, never what the agent decided. */
export const exitChecks: Check[] = [
  {
    id: 'A2ACLI_EXIT_001',
    how: 'a success, usage errors, an A2A error, unreachable, no card, credentials, a timeout, a failed download',
    async run({ agents, run, raw, cwd }, observe) {
      const slow = await raw(() => ({ result: task('w1', 'TASK_STATE_WORKING') }), { capabilities: {} })
      const json = (args: string[]) => run([...args, '-o', 'json'])
      const cases: Array<[string, Promise<Run>, number, string | undefined]> = [
        ['a completed send', json(['send', '-a', agents.runtime, 'hello']), 0, undefined],
        ['an unknown option', json(['send', '-a', agents.runtime, '--no-such-flag', 'hello']), 2, 'A2ACLI_ERR_USAGE'],
        ['a missing argument', json(['task', 'get', '-a', agents.runtime]), 2, 'A2ACLI_ERR_USAGE'],
        [
          'a misplaced --media-type',
          json(['send', '-a', agents.runtime, '--media-type', 'text/plain']),
          2,
          'A2ACLI_ERR_USAGE',
        ],
        ['a bad --timeout', json(['send', '-a', agents.runtime, '--timeout', 'soon', 'hello']), 2, 'A2ACLI_ERR_USAGE'],
        ['an unknown task', json(['task', 'get', '-a', agents.runtime, 'no-such-task']), 1, 'TaskNotFoundError'],
        ['an unreachable agent', json(['send', '-a', 'http://127.0.0.1:9/', 'hello']), 3, 'A2ACLI_ERR_UNREACHABLE'],
        ['a missing card file', json(['card', 'get', '-a', './no-such-card.json']), 3, 'A2ACLI_ERR_CARD_NOT_FOUND'],
        ['no credential', json(['send', '-a', agents.guarded, 'hello']), 4, 'A2ACLI_ERR_CREDENTIALS_MISSING'],
        [
          'a wrong credential',
          json(['send', '-a', agents.guarded, '--bearer', 'wrong', 'hello']),
          4,
          'A2ACLI_ERR_AUTH_FAILED',
        ],
        [
          'a timeout',
          json(['task', 'get', '-a', slow.url, '--wait', '--poll-interval', '100ms', '--timeout', '500ms', 'w1']),
          5,
          'A2ACLI_ERR_TIMEOUT',
        ],
      ]
      // A download into a folder that is a file: a failure of the tool's own, with no better code.
      const taskId = sentTask(await run(['send', '-a', agents.runtime, '-o', 'json', 'parts']))?.id ?? 'none'
      writeFileSync(join(cwd, 'not-a-folder'), '')
      cases.push([
        'a download into a file',
        json(['task', 'download', '-a', agents.runtime, '--dir', 'not-a-folder', taskId]),
        1,
        'A2ACLI_ERR_INTERNAL',
      ])
      const runs = await Promise.all(cases.map(([, running]) => running))
      cases.forEach(([what, , status, code], index) => {
        const each = runs[index]!
        const envelope = envelopeOf(each)
        observe.expect(
          each.code === status && (code === undefined || envelope?.code === code),
          `${what}: exit ${status}${code ? ` with ${code}` : ''}`,
          described(each),
        )
        if (envelope)
          observe.expect(each.code === statusFor(envelope.code), `${envelope.code}'s own status`, described(each))
      })
      // A usage error commander finds itself is the error envelope too under -o json, naming the option.
      observe.expect(
        /unknown option/.test(envelopeOf(runs[1]!)?.message ?? ''),
        'the unknown option named in the envelope',
        described(runs[1]!),
      )
      const text = await run(['send', '-a', agents.runtime, '--no-such-flag', 'hello'])
      observe.expect(
        text.code === 2 && /unknown option/.test(text.stderr) && text.stdout === '',
        'in text, the unknown option named on stderr, exit 2',
        described(text),
      )
    },
  },
  {
    id: 'A2ACLI_EXIT_002',
    how: 'tasks that fail, are rejected, wait for input or for authorization: exit 0, a warning on stderr, json too',
    async run({ agents, run }, observe) {
      const outcomes = [
        ['fail', 'TASK_STATE_FAILED', /FAILED/],
        ['reject', 'TASK_STATE_REJECTED', /REJECTED/],
        ['ask', 'TASK_STATE_INPUT_REQUIRED', /INPUT_REQUIRED/],
        ['auth', 'TASK_STATE_AUTH_REQUIRED', /AUTH_REQUIRED/],
      ] as const
      const runs = await Promise.all(
        outcomes.flatMap(([text]) => [
          run(['send', '-a', agents.runtime, text]),
          run(['send', '-a', agents.runtime, '-o', 'json', text]),
        ]),
      )
      outcomes.forEach(([text, state, warning], index) => {
        const [plain, json] = [runs[index * 2]!, runs[index * 2 + 1]!]
        observe.expect(
          plain.code === 0 && new RegExp(`^Warning: .*${warning.source}`, 'm').test(plain.stderr),
          `"${text}": exit 0 and a warning naming the outcome`,
          described(plain),
        )
        observe.expect(
          json.code === 0 && stateOf(sentTask(json)) === state,
          `"${text}" in json: exit 0, ${state}`,
          described(json),
        )
      })
      const sdk = await run(['send', '-a', agents.sdk.url, 'ask'])
      observe.expect(
        sdk.code === 0 && /^Warning: /m.test(sdk.stderr),
        "the SDK agent's question: exit 0, a warning",
        described(sdk),
      )
    },
  },
]
