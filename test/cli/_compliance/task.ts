import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { FILE_TEXT, INLINE_BYTES } from './agents.ts'
import { described, envelopeOf, field, jsonLines, type Run } from './cli.ts'
import type { Check, Context } from './context.ts'
import { artifactText, type Doc, docOf, sentTask, stateOf } from './read.ts'

const COMPLETED = 'TASK_STATE_COMPLETED'
const CANCELED = 'TASK_STATE_CANCELED'

/** Starts `wait` (a task that works until canceled) without waiting: its id. */
async function runningTask(run: Context['run'], agent: string): Promise<string> {
  return sentTask(await run(['send', '-a', agent, '-o', 'json', '--async', 'wait']))?.id ?? 'none'
}

/** Runs `args` (a command following a task) and cancels `taskId` once it has printed its first line. */
function cancelAfterFirstLine(run: Context['run'], args: string[], agent: string, taskId: string): Promise<Run> {
  let canceling: Promise<Run> | undefined
  return run(args, {
    watch: ({ stdout }) => {
      if (!canceling && stdout.includes('\n')) canceling = run(['task', 'cancel', '-a', agent, taskId])
    },
  })
}

/** `task get|cancel|list|subscribe|download|push-config`. */
export const taskChecks: Check[] = [
  {
    id: 'A2ACLI_TASK_GET_001',
    how: 'task get of a task with text, data and file artifacts (text, json, --history), and of an SDK task',
    async run({ agents, run }, observe) {
      const [parts, sdkSent] = await Promise.all([
        run(['send', '-a', agents.runtime, '-o', 'json', 'parts']),
        run(['send', '-a', agents.sdk.url, '-o', 'json', 'hello']),
      ])
      const sent = sentTask(parts)
      const [text, json, history, sdk] = await Promise.all([
        run(['task', 'get', '-a', agents.runtime, sent?.id ?? 'none']),
        run(['task', 'get', '-a', agents.runtime, '-o', 'json', sent?.id ?? 'none']),
        run(['task', 'get', '-a', agents.runtime, '--history', '5', sent?.id ?? 'none']),
        run(['task', 'get', '-a', agents.sdk.url, '-o', 'json', sentTask(sdkSent)?.id ?? 'none']),
      ])
      observe.expect(
        field(text.stdout, 'Task') === sent?.id && field(text.stdout, 'State') === 'COMPLETED',
        'task get to print the task id and its state',
        described(text),
      )
      for (const shown of ['Plain words of the answer', '"city": "Oslo"', 'File: report.pdf', 'File: notes.txt'])
        observe.expect(text.stdout.includes(shown), `task get to show the artifact part "${shown}"`, described(text))
      observe.expect(
        JSON.stringify(docOf(json)?.artifacts) === JSON.stringify(sent?.artifacts),
        "-o json: the task's artifacts as the agent gave them",
        described(json),
      )
      observe.expect(/^History: user$/m.test(history.stdout), '--history to show the history', described(history))
      observe.expect(
        artifactText(docOf(sdk)) === 'Echo: hello' && stateOf(docOf(sdk)) === COMPLETED,
        "the SDK agent's task with its answer",
        described(sdk),
      )
    },
  },
  {
    id: 'A2ACLI_TASK_CANCEL_001',
    how: "task cancel of a working task on this runtime's agent and the SDK's, then again",
    async run({ agents, run }, observe) {
      for (const [who, agent] of [
        ['runtime', agents.runtime],
        ['SDK', agents.sdk.url],
      ] as const) {
        const taskId = await runningTask(run, agent)
        const first = await run(['task', 'cancel', '-a', agent, taskId])
        observe.expect(
          first.code === 0 && field(first.stdout, 'State') === 'CANCELED' && field(first.stdout, 'Task') === taskId,
          `the ${who} agent's task canceled, its state printed`,
          described(first),
        )
        const again = await run(['task', 'cancel', '-a', agent, '-o', 'json', taskId])
        const repeated = again.code === 0 && stateOf(docOf(again)) === CANCELED
        const refused = again.code === 1 && envelopeOf(again)?.code === 'TaskNotCancelableError'
        observe.expect(
          repeated || refused,
          `a second cancel to answer CANCELED again or TaskNotCancelableError (${who})`,
          described(again),
        )
      }
    },
  },
  {
    id: 'A2ACLI_TASK_LIST_001',
    how: 'task list of one context, by state, and page by page with --page-size and --page-token',
    async run({ agents, run }, observe) {
      const first = sentTask(await run(['send', '-a', agents.runtime, '-o', 'json', 'hello']))
      const contextId = first?.contextId ?? 'none'
      for (const text of ['again', 'fail'])
        await run(['send', '-a', agents.runtime, '-o', 'json', '--context-id', contextId, text])
      const list = (...flags: string[]) =>
        run(['task', 'list', '-a', agents.runtime, '-o', 'json', '--context-id', contextId, ...flags])
      const [all, failed, page1] = await Promise.all([list(), list('--status', 'failed'), list('--page-size', '2')])
      const tasks = (each: Run) => (docOf(each)?.tasks ?? []) as Doc[]
      observe.expect(
        tasks(all).length === 3 && tasks(all).every((task) => task.contextId === contextId),
        'the three tasks of the context, and only them',
        described(all),
      )
      observe.expect(
        tasks(failed).length === 1 && stateOf(tasks(failed)[0]) === 'TASK_STATE_FAILED',
        '--status failed to list the one failed task',
        described(failed),
      )
      const token = docOf(page1)?.nextPageToken
      const page2 = await list('--page-size', '2', '--page-token', String(token))
      const ids = [...tasks(page1), ...tasks(page2)].map((task) => task.id)
      observe.expect(
        tasks(page1).length === 2 && !!token && tasks(page2).length === 1 && new Set(ids).size === 3,
        'two pages: two tasks and a token, then the third task',
        `${described(page1)}; ${described(page2)}`,
      )
    },
  },
  {
    id: 'A2ACLI_TASK_SUBSCRIBE_001',
    how: "task subscribe --stream to a working task of this runtime's agent and of the SDK's, until canceled",
    async run({ agents, run }, observe) {
      for (const [who, agent] of [
        ['runtime', agents.runtime],
        ['SDK', agents.sdk.url],
      ] as const) {
        const taskId = await runningTask(run, agent)
        const followed = await cancelAfterFirstLine(
          run,
          ['task', 'subscribe', '-a', agent, '--stream', '-o', 'json', taskId],
          agent,
          taskId,
        )
        const lines = jsonLines(followed.stdout) as Doc[]
        observe.expect(
          followed.code === 0 &&
            lines[0]?.task?.id === taskId &&
            lines.at(-1)?.statusUpdate?.status?.state === CANCELED,
          `the ${who} agent's task followed: the Task first, the stream to its end`,
          described(followed),
        )
      }
    },
  },
  {
    id: 'A2ACLI_TASK_SUBSCRIBE_002',
    how: 'a subscription cut after two events resumes with Last-Event-ID; the Task comes first again; no GetTask',
    async run({ run, raw }, observe) {
      const working = { id: 'r1', contextId: 'ctx-r1', status: { state: 'TASK_STATE_WORKING' } }
      const agent = await raw((call, self) => {
        if (call.operation !== 'SubscribeToTask') return { result: working }
        const update = (state: string) => ({ statusUpdate: { taskId: 'r1', contextId: 'ctx-r1', status: { state } } })
        return self.calls('SubscribeToTask').length === 1
          ? { events: [{ task: working }, update('TASK_STATE_WORKING')], cut: true }
          : { events: [{ task: working }, update(COMPLETED)] }
      })
      const followed = await run(['task', 'subscribe', '-a', agent.url, '--stream', '-o', 'json', 'r1'])
      const subscriptions = agent.calls('SubscribeToTask')
      observe.expect(
        subscriptions.length === 2 && subscriptions[1]!.headers['last-event-id'] === '2',
        'a second subscription with Last-Event-ID: 2, the last event received',
        `${subscriptions.length} subscription(s), Last-Event-ID ${subscriptions[1]?.headers['last-event-id']}`,
      )
      observe.expect(agent.calls('GetTask').length === 0, 'no GetTask', `${agent.calls('GetTask').length} GetTask`)
      const lines = jsonLines(followed.stdout) as Doc[]
      observe.expect(
        followed.code === 0 && lines.at(-1)?.statusUpdate?.status?.state === COMPLETED,
        'the task followed to its end',
        described(followed),
      )
    },
  },
  {
    id: 'A2ACLI_DOWNLOAD_001',
    how: 'task download of a task with text, data, an inline file and a file by URL',
    async run({ agents, run, folder }, observe) {
      const taskId = sentTask(await run(['send', '-a', agents.runtime, '-o', 'json', 'parts']))?.id ?? 'none'
      const dir = folder()
      const saved = await run(['task', 'download', '-a', agents.runtime, '--dir', dir, taskId])
      const names = readdirSync(dir).sort()
      observe.expect(
        JSON.stringify(names) === JSON.stringify(['figures.json', 'notes.txt', 'report.pdf', 'summary.txt']),
        'four files: summary.txt, figures.json, report.pdf, notes.txt',
        `${JSON.stringify(names)} (${described(saved)})`,
      )
      const read = (name: string) => (names.includes(name) ? readFileSync(join(dir, name)) : Buffer.alloc(0))
      observe.expect(read('summary.txt').toString() === 'Plain words of the answer', 'the text as it is', 'other text')
      observe.expect(
        JSON.parse(read('figures.json').toString() || '{}').city === 'Oslo',
        'the data as JSON',
        'other data',
      )
      observe.expect(read('report.pdf').equals(INLINE_BYTES), "the inline file's bytes", 'other bytes')
      observe.expect(read('notes.txt').toString() === FILE_TEXT, 'the file fetched from its URL', 'other content')
    },
  },
  {
    id: 'A2ACLI_PUSH_001',
    how: "task push-config create, get, list and delete on this runtime's agent and the SDK's",
    async run({ agents, run }, observe) {
      for (const [who, agent] of [
        ['runtime', agents.runtime],
        ['SDK', agents.sdk.url],
      ] as const) {
        const taskId = await runningTask(run, agent)
        const push = (...args: string[]) => run(['task', 'push-config', ...args, '-a', agent, '-o', 'json'])
        const created = await push('create', taskId, '--webhook', 'http://127.0.0.1:9/compliance-hook')
        const configId = docOf(created)?.id
        const [got, listed] = await Promise.all([push('get', taskId, String(configId)), push('list', taskId)])
        const deleted = await push('delete', taskId, String(configId))
        const after = await push('list', taskId)
        observe.expect(!!configId && created.code === 0, `create to give the config an id (${who})`, described(created))
        observe.expect(
          docOf(got)?.url === 'http://127.0.0.1:9/compliance-hook',
          `get to read the config (${who})`,
          described(got),
        )
        observe.expect(
          (docOf(listed)?.configs ?? []).some((config: Doc) => config.id === configId),
          `list to include it (${who})`,
          described(listed),
        )
        observe.expect(
          deleted.code === 0 && (docOf(after)?.configs ?? []).length === 0,
          `delete to remove it (${who})`,
          `${described(deleted)}; ${described(after)}`,
        )
        await run(['task', 'cancel', '-a', agent, taskId])
      }
    },
  },
]
