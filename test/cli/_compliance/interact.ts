import { readFileSync } from 'node:fs'
import { described, envelopeOf, field, shell } from './cli.ts'
import type { Check } from './context.ts'
import { completedTask } from './raw-agent.ts'
import { artifactText, type Doc, filesUnder, sentTask, stateOf } from './read.ts'

const COMPLETED = 'TASK_STATE_COMPLETED'
const INPUT_REQUIRED = 'TASK_STATE_INPUT_REQUIRED'

/** Continuing an interaction: contexts and tasks named explicitly, reported back, never remembered. */
export const interactChecks: Check[] = [
  {
    id: 'A2ACLI_INTERACT_001',
    how: "send --context-id starts a second task in the first one's context, on this runtime's agent and the SDK's",
    async run({ agents, run }, observe) {
      for (const [who, agent] of [
        ['runtime', agents.runtime],
        ['SDK', agents.sdk.url],
      ] as const) {
        const first = sentTask(await run(['send', '-a', agent, '-o', 'json', 'hello']))
        const next = await run(['send', '-a', agent, '-o', 'json', '--context-id', first?.contextId ?? 'none', 'again'])
        const second = sentTask(next)
        observe.expect(
          stateOf(second) === COMPLETED && second?.contextId === first?.contextId && second?.id !== first?.id,
          `a new task in the same context (${who})`,
          described(next),
        )
      }
    },
  },
  {
    id: 'A2ACLI_INTERACT_002',
    how: '--task-id answers a paused task (runtime, SDK); an unknown, a mismatched or an ended task fails, no new task',
    async run({ agents, run }, observe) {
      for (const [who, agent] of [
        ['runtime', agents.runtime],
        ['SDK', agents.sdk.url],
      ] as const) {
        const asked = sentTask(await run(['send', '-a', agent, '-o', 'json', 'ask']))
        const answered = await run(['send', '-a', agent, '-o', 'json', '--task-id', asked?.id ?? 'none', 'Oslo'])
        observe.expect(
          stateOf(asked) === INPUT_REQUIRED &&
            sentTask(answered)?.id === asked?.id &&
            artifactText(sentTask(answered)) === 'Echo: Oslo',
          `the paused task answered with --task-id alone, the same task completed (${who})`,
          described(answered),
        )
      }
      const asked = sentTask(await run(['send', '-a', agents.runtime, '-o', 'json', 'ask']))
      const ended = sentTask(await run(['send', '-a', agents.runtime, '-o', 'json', 'hello']))
      const refusals = [
        ['an unknown task', ['--task-id', 'no-such-task'], 'refused-unknown'],
        [
          'a task with another context',
          ['--task-id', asked?.id ?? 'none', '--context-id', 'another-context'],
          'refused-mismatch',
        ],
        ['a completed task', ['--task-id', ended?.id ?? 'none'], 'refused-ended'],
      ] as const
      const runs = await Promise.all(
        refusals.map(([, flags, text]) => run(['send', '-a', agents.runtime, '-o', 'json', ...flags, text])),
      )
      refusals.forEach(([what, , text], index) => {
        const refused = runs[index]!
        const envelope = envelopeOf(refused)
        observe.expect(
          refused.code !== 0 && /^[A-Z]\w+Error$/.test(envelope?.code ?? '') && /--debug/.test(envelope?.hint ?? ''),
          `${what} to fail with the agent's A2A error and a hint naming --debug`,
          described(refused),
        )
        observe.expect(
          !agents.received.some((message) => message.text === text),
          `${what}: no task to run the message`,
          'the agent ran it',
        )
      })
    },
  },
  {
    id: 'A2ACLI_INTERACT_003',
    how: 'the messages a scripted agent receives: no task or context id unless given, a new message id each',
    async run({ run, raw }, observe) {
      const agent = await raw(() => ({ result: { task: completedTask('t1') } }), { capabilities: {} })
      await run(['send', '-a', agent.url, 'first'])
      await run(['send', '-a', agent.url, '--context-id', 'ctx-t1', 'second'])
      await run(['send', '-a', agent.url, '--context-id', 'ctx-t1', 'third'])
      const messages = agent.calls('SendMessage').map((call) => (call.params?.message ?? {}) as Doc)
      observe.expect(messages.length === 3, 'three messages sent', `${messages.length}`)
      observe.expect(
        messages[0]?.taskId === undefined && messages[0]?.contextId === undefined,
        'no taskId or contextId on a new interaction',
        JSON.stringify(messages[0]),
      )
      observe.expect(
        messages.slice(1).every((message) => message.contextId === 'ctx-t1' && message.taskId === undefined),
        'the context given, and no task of its own choosing, in the same context twice',
        JSON.stringify(messages.slice(1)),
      )
      observe.expect(
        new Set(messages.map((message) => message.messageId)).size === 3 && messages.every((each) => !!each.messageId),
        'a message id of its own on each message',
        JSON.stringify(messages.map((message) => message.messageId)),
      )
    },
  },
  {
    id: 'A2ACLI_INTERACT_004',
    how: 'text output of a completed task and of paused ones (input, auth); the printed Resume command run in bash',
    async run({ agents, run, cwd }, observe) {
      const [done, paused, auth] = await Promise.all([
        run(['send', '-a', agents.runtime, 'hello']),
        run(['send', '-a', agents.runtime, 'ask']),
        run(['send', '-a', agents.runtime, 'auth']),
      ])
      for (const [what, each, state] of [
        ['completed', done, 'COMPLETED'],
        ['input-required', paused, 'INPUT_REQUIRED'],
        ['auth-required', auth, 'AUTH_REQUIRED'],
      ] as const)
        observe.expect(
          !!field(each.stdout, 'Task') && !!field(each.stdout, 'Context') && field(each.stdout, 'State') === state,
          `Task, Context and State: ${state} for the ${what} task`,
          described(each),
        )
      const taskId = field(paused.stdout, 'Task')
      const resume = field(paused.stdout, 'Resume') ?? ''
      observe.expect(
        resume.includes(`--task-id ${taskId}`) && field(auth.stdout, 'Resume') !== undefined,
        'a Resume command naming the task, for both paused tasks',
        resume,
      )
      const resumed = await shell('A2ACLI_INTERACT_004', resume.replace('<reply>', 'Oslo'), { cwd })
      observe.expect(
        field(resumed.stdout, 'Task') === taskId && field(resumed.stdout, 'State') === 'COMPLETED',
        'the Resume command, pasted with a reply, to complete the same task',
        described(resumed),
      )
    },
  },
  {
    id: 'A2ACLI_INTERACT_005',
    how: 'after a paused task, a send without ids starts afresh; --continue is refused; no file holds an id',
    async run({ agents, run, cwd, configHome }, observe) {
      const asked = sentTask(await run(['send', '-a', agents.runtime, '-o', 'json', 'ask']))
      const next = sentTask(await run(['send', '-a', agents.runtime, '-o', 'json', 'Oslo']))
      observe.expect(
        !!asked?.id && next?.id !== asked.id && next?.contextId !== asked.contextId && stateOf(next) === COMPLETED,
        'a send without --task-id or --context-id to start a new task in a new context',
        JSON.stringify({ asked: asked?.id, next: next?.id }),
      )
      const [resumeFlag, help] = await Promise.all([
        run(['send', '-a', agents.runtime, '--continue', 'x']),
        run(['send', '--help']),
      ])
      observe.expect(resumeFlag.code === 2, '--continue to be an unknown option (exit 2)', described(resumeFlag))
      observe.expect(!/--continue|--last|--resume/.test(help.stdout), 'no resume-the-last option in send --help', 'one')
      const holding = filesUnder(cwd).filter((path) => asked?.id && readFileSync(path, 'utf8').includes(asked.id))
      observe.expect(holding.length === 0, 'no file written holding the task id', holding.join(', '))
      observe.expect(
        !filesUnder(cwd).some((path) => path.startsWith(configHome)),
        'nothing written to the configuration folder',
        filesUnder(cwd).join(', '),
      )
    },
  },
]
