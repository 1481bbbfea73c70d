import { described, envelopeOf, field, jsonLines } from './cli.ts'
import type { Check } from './context.ts'
import { task } from './raw-agent.ts'
import { type Doc, docOf, sentTask, stateOf } from './read.ts'

const COMPLETED = 'TASK_STATE_COMPLETED'

/** Polling: `task get --wait`, its controls, interrupted and unknown states, and the fallback from a stream. */
export const pollChecks: Check[] = [
  {
    id: 'A2ACLI_TASK_POLL_001',
    how: 'task get reads a working task once; task get --wait waits for a slow task and stops at a paused one',
    async run({ agents, run }, observe) {
      const [working, slow, asked] = await Promise.all(
        ['wait', 'slow', 'ask'].map(async (text) =>
          sentTask(await run(['send', '-a', agents.runtime, '-o', 'json', '--async', text])),
        ),
      )
      const [once, waited, paused] = await Promise.all([
        run(['task', 'get', '-a', agents.runtime, '-o', 'json', working?.id ?? 'none']),
        run([
          'task',
          'get',
          '-a',
          agents.runtime,
          '-o',
          'json',
          '--wait',
          '--poll-interval',
          '200ms',
          slow?.id ?? 'none',
        ]),
        run(['task', 'get', '-a', agents.runtime, '-o', 'json', '--wait', asked?.id ?? 'none']),
      ])
      observe.expect(stateOf(docOf(once)) === 'TASK_STATE_WORKING', 'one read of the working task', described(once))
      observe.expect(stateOf(docOf(waited)) === COMPLETED, '--wait to end with the task completed', described(waited))
      observe.expect(
        stateOf(docOf(paused)) === 'TASK_STATE_INPUT_REQUIRED',
        '--wait to stop at the paused task',
        described(paused),
      )
      await run(['task', 'cancel', '-a', agents.runtime, working?.id ?? 'none'])
    },
  },
  {
    id: 'A2ACLI_TASK_POLL_002',
    how: 'task get --wait --poll-interval 200ms --timeout 2s on a task that stays working; send interrupted by SIGINT',
    timeoutMs: 40_000,
    async run({ agents, run, raw }, observe) {
      const agent = await raw(() => ({ result: task('w1', 'TASK_STATE_WORKING') }), { capabilities: {} })
      const waited = await run([
        'task',
        'get',
        '-a',
        agent.url,
        '-o',
        'json',
        '--wait',
        '--poll-interval',
        '200ms',
        '--timeout',
        '2s',
        'w1',
      ])
      observe.expect(
        waited.code === 5 && envelopeOf(waited)?.code === 'A2ACLI_ERR_TIMEOUT',
        '--timeout to end the wait with A2ACLI_ERR_TIMEOUT, exit 5',
        described(waited),
      )
      observe.expect(
        waited.ms >= 1900,
        'the wait to last the 2 s of --timeout',
        `${Math.round(waited.ms / 100) / 10} s`,
      )
      const reads = agent.calls('GetTask').map((call) => call.at)
      const gaps = reads.slice(1).map((at, index) => at - reads[index]!)
      // The last pause may be cut short by the deadline: the ones before it show the interval and the backoff.
      const paced = gaps.slice(0, -1)
      observe.expect(
        reads.length >= 3 && reads.length <= 10 && paced.every((gap) => gap >= 180),
        'reads no closer than the 200 ms interval, 3 to 10 in 2 s',
        `${reads.length} reads, ${paced.filter((gap) => gap < 180).length} of them sooner than the interval`,
      )
      // Against the shortest pause, not the first: one slow read stretches the gap it is in. The last pause counts
      // toward the growth but never as the base: the deadline may have cut it short, or no read followed it.
      observe.expect(
        paced.length >= 2 && Math.max(...gaps) >= 1.4 * Math.min(...paced) && Math.max(...gaps) <= 2000,
        'the pause to grow (backoff) and stay bounded',
        paced.length < 2
          ? 'too few reads to tell'
          : `pauses of ${gaps.map((gap) => Math.round(gap)).join(', ')} ms: they did not grow, or grew past 2 s`,
      )
      // Ctrl-C while send waits: it stops at once, the task id it printed still names the running task.
      let interrupted = false
      const stopped = await run(['send', '-a', agents.runtime, 'wait'], {
        watch: ({ stderr }, child) => {
          if (!interrupted && /^Waiting for task \S+/m.test(stderr)) {
            interrupted = true
            child.kill('SIGINT')
          }
        },
      })
      const printed = /^Waiting for task (\S+) \(context \S+\)/m.exec(stopped.stderr)?.[1]
      observe.expect(
        interrupted && stopped.code === 130 && !!printed,
        'SIGINT to end the wait (status 130), the task id printed before it',
        described(stopped),
      )
      const after = await run(['task', 'get', '-a', agents.runtime, '-o', 'json', printed ?? 'none'])
      observe.expect(
        stateOf(docOf(after)) === 'TASK_STATE_WORKING',
        'the printed id to read the task, still working',
        described(after),
      )
      await run(['task', 'cancel', '-a', agents.runtime, printed ?? 'none'])
    },
  },
  {
    id: 'A2ACLI_TASK_POLL_003',
    how: '--wait returns at once on INPUT_REQUIRED and AUTH_REQUIRED; UNSPECIFIED keeps it reading, shown as received',
    async run({ agents, run, raw }, observe) {
      const ask = async (text: string) => sentTask(await run(['send', '-a', agents.runtime, '-o', 'json', text]))
      const [asked, auth] = await Promise.all([ask('ask'), ask('auth')])
      const waitFor = (each: Doc) =>
        run(['task', 'get', '-a', agents.runtime, '-o', 'json', '--wait', '--poll-interval', '30s', each?.id ?? 'none'])
      const [input, authorization] = await Promise.all([waitFor(asked), waitFor(auth)])
      for (const [each, state] of [
        [input, 'TASK_STATE_INPUT_REQUIRED'],
        [authorization, 'TASK_STATE_AUTH_REQUIRED'],
      ] as const)
        observe.expect(
          stateOf(docOf(each)) === state && each.ms < 15_000,
          `--wait (interval 30 s) to return at once on ${state}`,
          described(each),
        )
      const agent = await raw(
        (call, self) => {
          if (call.params?.id === 'u-forever') return { result: task('u-forever', 'TASK_STATE_UNSPECIFIED') }
          const reads = self.calls('GetTask').filter((each) => each.params?.id === 'u3').length
          return { result: reads < 3 ? task('u3', 'TASK_STATE_UNSPECIFIED') : task('u3', COMPLETED) }
        },
        { capabilities: {} },
      )
      const [resolved, forever, once] = await Promise.all([
        run(['task', 'get', '-a', agent.url, '-o', 'json', '--wait', '--poll-interval', '100ms', 'u3']),
        run(['task', 'get', '-a', agent.url, '--wait', '--poll-interval', '100ms', '--timeout', '1500ms', 'u-forever']),
        run(['task', 'get', '-a', agent.url, 'u-forever']),
      ])
      observe.expect(
        stateOf(docOf(resolved)) === COMPLETED &&
          agent.calls('GetTask').filter((each) => each.params?.id === 'u3').length === 3,
        'reading on through UNSPECIFIED until the task completed',
        described(resolved),
      )
      observe.expect(
        forever.code === 5 && /A2ACLI_ERR_TIMEOUT/.test(forever.stderr),
        'an UNSPECIFIED task to be waited for until --timeout (exit 5)',
        described(forever),
      )
      observe.expect(field(once.stdout, 'State') === 'UNSPECIFIED', 'the state shown as received', described(once))
    },
  },
  {
    id: 'A2ACLI_TASK_POLL_004',
    how: 'send (waiting, and --stream) to an agent cutting its stream after the Task: the task read until it ends',
    async run({ run, raw }, observe) {
      const agent = await raw((call, self) => {
        const id = String(call.params?.id ?? 's1')
        if (call.operation === 'SendStreamingMessage' || call.operation === 'SubscribeToTask')
          return { events: [{ task: task(id, 'TASK_STATE_WORKING') }], cut: true }
        const reads = self.calls('GetTask').filter((each) => each.params?.id === id).length
        return { result: task(id, reads < 2 ? 'TASK_STATE_WORKING' : COMPLETED) }
      })
      const [waited, streamed] = await Promise.all([
        run(['send', '-a', agent.url, '-o', 'json', '--poll-interval', '100ms', 'hello']),
        run(['send', '-a', agent.url, '-o', 'json', '--stream', '--poll-interval', '100ms', 'hello']),
      ])
      observe.expect(
        waited.code === 0 && stateOf(sentTask(waited)) === COMPLETED,
        'the waiting send to end with the task completed, read after the cut',
        described(waited),
      )
      const last = (jsonLines(streamed.stdout) as Doc[]).at(-1)
      observe.expect(
        streamed.code === 0 && stateOf(last?.task) === COMPLETED,
        'the streamed send to end with the completed task as its last line',
        described(streamed),
      )
      observe.expect(
        agent.calls('GetTask').length >= 2 && /stream/i.test(waited.stderr),
        'GetTask reads after the stream broke, said on stderr',
        `${agent.calls('GetTask').length} GetTask; ${described(waited)}`,
      )
    },
  },
]
