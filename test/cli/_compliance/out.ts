import { described, envelopeOf, field, jsonLines, type Run } from './cli.ts'
import type { Check } from './context.ts'
import { task } from './raw-agent.ts'
import { type Doc, docOf, sentTask, stateOf } from './read.ts'
import { ERROR_CODES } from './requirements.ts'

const COMPLETED = 'TASK_STATE_COMPLETED'

/** Anything but a tab or a newline below 0x20, and DEL: control characters, escape sequences included. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: what it looks for
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/

/**
 * Whether text output keeps the text floor: each line a `Label: value` field, a block (its `Label:` line, content
 * lines indented by two spaces, one empty line closing it), or an empty line between records; no control
 * character. Returns the first line that breaks it, or undefined.
 */
export function textFloorBreak(text: string): string | undefined {
  if (CONTROL.test(text)) return `a control character in ${JSON.stringify(text.match(CONTROL)![0])}`
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  for (let at = 0; at < lines.length; at++) {
    const line = lines[at]!
    if (line === '') continue
    if (!/^[A-Z][A-Za-z0-9 ]*:( \S.*)?$/.test(line)) return line
    if (!lines[at + 1]?.startsWith('  ')) continue
    // A block: indented content up to the empty line that closes it.
    while (lines[at + 1]?.startsWith('  ')) at++
    if (at + 1 < lines.length && lines[at + 1] !== '') return `${lines[at + 1]} (a block not closed by an empty line)`
    if (at + 1 >= lines.length) return `${line} (a block left open)`
  }
  return undefined
}

/** The labels of a text output, in order. */
const labels = (text: string) =>
  text
    .split('\n')
    .filter((line) => /^[A-Z]/.test(line))
    .map((line) => line.slice(0, line.indexOf(':')))

/** The output contract: streams, documents, JSON lines, the error envelope and the text floor. */
export const outChecks: Check[] = [
  {
    id: 'A2ACLI_OUT_001',
    how: 'a completed and a failed task in text, json and both --stream: ids and state, stdout vs stderr',
    async run({ agents, run }, observe) {
      const modes = [[], ['-o', 'json'], ['-o', 'json', '--stream'], ['--stream']]
      const runs = await Promise.all(
        ['hello', 'fail'].flatMap((text) => modes.map((flags) => run(['send', '-a', agents.runtime, ...flags, text]))),
      )
      runs.forEach((each, index) => {
        const mode = ['text', 'json', 'json --stream', 'text --stream'][index % 4]
        const text = index < 4 ? 'completed' : 'failed'
        const state = index < 4 ? COMPLETED : 'TASK_STATE_FAILED'
        let named = false
        if (mode === 'json') {
          const sent = sentTask(each)
          named = !!sent?.id && !!sent?.contextId && stateOf(sent) === state
        } else if (mode === 'json --stream') {
          // The terminal event: a status update, or the Task itself when the stream's first event already settled it.
          const final = (jsonLines(each.stdout) as Doc[]).at(-1)
          const last = final?.statusUpdate ?? (final?.task && { ...final.task, taskId: final.task.id })
          named = !!last?.taskId && !!last?.contextId && last?.status?.state === state
        } else {
          const tail = each.stdout.trimEnd().split('\n').slice(-3).join('\n')
          const where = mode === 'text' ? each.stdout : tail
          named = !!field(where, 'Task') && !!field(where, 'Context') && field(where, 'State') === state.slice(11)
        }
        observe.expect(named, `${mode}: task, context and state of the ${text} task on stdout`, described(each))
        const stderrOk = text === 'completed' ? each.stderr === '' : /^Warning: .*FAILED/m.test(each.stderr)
        observe.expect(
          stderrOk && !/Warning/.test(each.stdout),
          `${mode}: stderr ${text === 'completed' ? 'empty' : 'the warning alone'}, stdout free of it (${text})`,
          described(each),
        )
      })
    },
  },
  {
    id: 'A2ACLI_OUT_002',
    how: '-o json of send (over a stream), task get, task cancel, card get: one document each, A2ACLI_STREAM set too',
    async run({ agents, run }, observe) {
      const [sent, configured] = await Promise.all([
        run(['send', '-a', agents.runtime, '-o', 'json', 'drip']),
        run(['send', '-a', agents.runtime, '-o', 'json', 'hello'], { env: { A2ACLI_STREAM: 'true' } }),
      ])
      const one = (each: Run) => each.stdout.trimEnd().split('\n').length === 1 && docOf(each) !== undefined
      observe.expect(
        one(sent) && stateOf(sentTask(sent)) === COMPLETED && (sentTask(sent)?.artifacts ?? []).length === 1,
        'send: one SendMessageResponse, the completed task whole (its chunks joined)',
        described(sent),
      )
      observe.expect(one(configured), 'A2ACLI_STREAM not to turn a json send into JSON lines', described(configured))
      const taskId = sentTask(sent)?.id ?? 'none'
      const running = sentTask(await run(['send', '-a', agents.runtime, '-o', 'json', '--async', 'wait']))?.id ?? 'none'
      const [got, canceled, card] = await Promise.all([
        run(['task', 'get', '-a', agents.runtime, '-o', 'json', taskId]),
        run(['task', 'cancel', '-a', agents.runtime, '-o', 'json', running]),
        run(['card', 'get', '-a', agents.runtime, '-o', 'json']),
      ])
      observe.expect(one(got) && docOf(got)?.id === taskId, 'task get: one Task', described(got))
      observe.expect(one(canceled) && docOf(canceled)?.id === running, 'task cancel: one Task', described(canceled))
      observe.expect(one(card) && docOf(card)?.name === 'Compliance', 'card get: one AgentCard', described(card))
    },
  },
  {
    id: 'A2ACLI_OUT_003',
    how: '-o json --stream of an answer in five chunks 600 ms apart, and of a stream that ends in an A2A error',
    async run({ agents, run, raw }, observe) {
      const streamed = await run(['send', '-a', agents.runtime, '-o', 'json', '--stream', 'drip'])
      const lines = streamed.stdout.trimEnd().split('\n')
      observe.expect(
        lines.length >= 5 && lines.every((line) => line.startsWith('{') && docOf({ ...streamed, stdout: line })),
        'one complete JSON object per line',
        described(streamed),
      )
      observe.expect(
        streamed.firstStdoutMs !== undefined && streamed.ms - streamed.firstStdoutMs >= 1500,
        'the first line out while the agent still worked (flushed as it came)',
        'the lines came together at the end',
      )
      const last = (jsonLines(streamed.stdout) as Doc[]).at(-1)
      observe.expect(last?.statusUpdate?.status?.state === COMPLETED, 'the terminal event last', described(streamed))
      const agent = await raw(() => ({
        events: [{ task: task('e1', 'TASK_STATE_WORKING') }],
        errorAfter: { code: -32603, message: 'the agent broke down' },
      }))
      const broken = await run(['send', '-a', agent.url, '-o', 'json', '--stream', 'hello'])
      const brokenLines = jsonLines(broken.stdout) as Doc[]
      observe.expect(
        brokenLines.length === 2 &&
          brokenLines[0]?.task?.id === 'e1' &&
          brokenLines[1]?.error?.code === 'InternalError',
        'the event, then the error envelope (InternalError) as the last line',
        described(broken),
      )
      observe.expect(broken.code === 1, 'exit 1 after the error', described(broken))
    },
  },
  {
    id: 'A2ACLI_OUT_004',
    how: 'an unknown task over JSON-RPC and HTTP+JSON on both agents, an unreachable agent and a missing card',
    async run({ agents, run }, observe) {
      const cases = [
        [agents.runtime, 'JSONRPC', -32001],
        [agents.runtime, 'HTTP+JSON', 'TASK_NOT_FOUND'],
        [agents.sdk.url, 'JSONRPC', -32001],
        [agents.sdk.url, 'HTTP+JSON', 'TASK_NOT_FOUND'],
      ] as const
      const [text, ...runs] = await Promise.all([
        run(['task', 'get', '-a', agents.runtime, 'no-such-task']),
        ...cases.map(([agent, binding]) =>
          run(['task', 'get', '-a', agent, '--transport', binding, '-o', 'json', 'no-such-task']),
        ),
      ])
      cases.forEach(([agent, binding, a2aCode], index) => {
        const envelope = envelopeOf(runs[index]!)
        observe.expect(
          envelope?.code === 'TaskNotFoundError' &&
            envelope.a2aCode === a2aCode &&
            !!envelope.hint &&
            !!envelope.message,
          `TaskNotFoundError (a2aCode ${a2aCode}) with a hint, from the ` +
            `${agent === agents.runtime ? 'runtime' : 'SDK'} agent over ${binding}`,
          described(runs[index]!),
        )
      })
      observe.expect(
        /^Error: .+\nCode: TaskNotFoundError\nA2A code: -32001\nHint: .+$/m.test(text.stderr) && text.stdout === '',
        'the text form on stderr: Error, Code, A2A code and Hint lines',
        described(text),
      )
      const [unreachable, missing] = await Promise.all([
        run(['send', '-a', 'http://127.0.0.1:9/', '-o', 'json', 'hello']),
        run(['send', '-a', new URL('no/such/card.json', agents.runtime).href, '-o', 'json', 'hello']),
      ])
      for (const [each, code] of [
        [unreachable, 'A2ACLI_ERR_UNREACHABLE'],
        [missing, 'A2ACLI_ERR_CARD_NOT_FOUND'],
      ] as const) {
        const envelope = envelopeOf(each)
        observe.expect(
          envelope?.code === code && !!envelope.hint && envelope.a2aCode === null,
          `${code} with a hint and no a2aCode`,
          described(each),
        )
      }
      const codes = [...runs, unreachable, missing].map((each) => envelopeOf(each)?.code ?? '')
      observe.expect(
        codes.every((code) => code in ERROR_CODES || /^[A-Z][A-Za-z]+Error$/.test(code)),
        'only A2A error names and registered A2ACLI_ERR_* codes',
        codes.join(', '),
      )
    },
  },
  {
    id: 'A2ACLI_OUT_005',
    how: 'text of send, send --stream, task get --history, task list, card get by the text floor; chat off a terminal',
    async run({ agents, run }, observe) {
      const [parts, parts2, streamed, escaped, card] = await Promise.all([
        run(['send', '-a', agents.runtime, 'parts']),
        run(['send', '-a', agents.runtime, 'parts']),
        run(['send', '-a', agents.runtime, '--stream', 'drip']),
        run(['send', '-a', agents.runtime, '\x1b[31mred\x1b[0m\x07 and\nnew line']),
        run(['card', 'get', '-a', agents.guarded]),
      ])
      const taskId = field(parts.stdout, 'Task') ?? 'none'
      const [history, list] = await Promise.all([
        run(['task', 'get', '-a', agents.runtime, '--history', '3', taskId]),
        run(['task', 'list', '-a', agents.runtime, '--page-size', '3']),
      ])
      for (const [what, each] of [
        ['send', parts],
        ['send --stream', streamed],
        ['send of control characters', escaped],
        ['task get --history', history],
        ['task list', list],
        ['card get', card],
      ] as const) {
        const broken = textFloorBreak(each.stdout)
        observe.expect(
          each.code === 0 && broken === undefined,
          `${what}: fields and blocks only`,
          broken ?? described(each),
        )
      }
      observe.expect(
        JSON.stringify(labels(parts.stdout)) === JSON.stringify(labels(parts2.stdout)),
        'the same labels in the same order for the same answer',
        `${labels(parts.stdout).join(',')} vs ${labels(parts2.stdout).join(',')}`,
      )
      const chat = await run(['chat', '-a', agents.runtime], { stdin: 'hello\n', limitMs: 15_000 })
      observe.expect(
        chat.code === 2 && chat.stdout === '' && /a2a send/.test(chat.stderr),
        'chat without a terminal to return at once without reading input, pointing at a2a send',
        described(chat),
      )
    },
  },
  {
    id: 'A2ACLI_OUT_006',
    how: "send --async in json and text to this runtime's agent and the SDK's: the task and context ids",
    async run({ agents, run }, observe) {
      for (const [who, agent] of [
        ['runtime', agents.runtime],
        ['SDK', agents.sdk.url],
      ] as const) {
        const [json, text] = await Promise.all([
          run(['send', '-a', agent, '-o', 'json', '--async', 'wait']),
          run(['send', '-a', agent, '--async', 'wait']),
        ])
        const sent = sentTask(json)
        observe.expect(!!sent?.id && !!sent?.contextId, `json: the task with its ids (${who})`, described(json))
        observe.expect(
          !!field(text.stdout, 'Task') && !!field(text.stdout, 'Context'),
          `text: Task and Context lines (${who})`,
          described(text),
        )
        await Promise.all(
          [sent?.id, field(text.stdout, 'Task')].map((id) => run(['task', 'cancel', '-a', agent, id ?? 'none'])),
        )
      }
    },
  },
  {
    id: 'A2ACLI_OUT_007',
    how: '--debug on a send over JSON-RPC and over HTTP+JSON: each request and answer on stderr, stdout unchanged',
    async run({ agents, run }, observe) {
      const [rpc, rest, quiet] = await Promise.all([
        run(['send', '-a', agents.runtime, '--transport', 'JSONRPC', '--debug', 'hello']),
        run(['send', '-a', agents.runtime, '--transport', 'HTTP+JSON', '--debug', 'hello']),
        run(['send', '-a', agents.runtime, 'hello']),
      ])
      observe.expect(
        /^debug: → GET \S+\/\.well-known\/agent-card\.json/m.test(rpc.stderr),
        'the card request logged',
        described(rpc),
      )
      observe.expect(
        /^debug: → .*"method":"SendStreamingMessage"/m.test(rpc.stderr) &&
          /^debug: ← .*"statusUpdate"/m.test(rpc.stderr),
        'JSON-RPC: the request body and the events received',
        described(rpc),
      )
      observe.expect(
        /^debug: → POST \S+\/message:stream/m.test(rest.stderr) && /^debug: ← /m.test(rest.stderr),
        'HTTP+JSON: the request and what came back',
        described(rest),
      )
      observe.expect(
        labels(rpc.stdout).join() === labels(quiet.stdout).join() && !/debug:/.test(rpc.stdout),
        'stdout as without --debug',
        described(rpc),
      )
    },
  },
]
