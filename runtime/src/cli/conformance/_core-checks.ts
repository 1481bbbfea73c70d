import { randomUUID } from 'node:crypto'
import { isObject } from '../../_is-object.js'
import type { BindingRun } from './_binding-run.js'
import { actualOf, expectError, inBinding, isError, isTask, stateProblem, TERMINAL } from './_expect.js'
import { fail, type Verdict } from './_results.js'
import { describe, type Json } from './_wire.js'

/** A task id no agent has: the unknown task of the error checks. */
export const unknownTaskId = () => `a2a-conformance-unknown-${randomUUID()}`

/** A plain text message from the user: what every agent takes, whatever its skills. */
export const textMessage = (text: string) => ({
  message: { role: 'ROLE_USER', messageId: randomUUID(), parts: [{ text }] },
})

/**
 * The core operations over one interface (A2A v1.0 §3.1): a message sent, its task got, listed and canceled, and
 * the errors of an unknown task, of invalid parameters and of an unsupported version. Answers the task the send
 * made (ended by then), if it made one, for the streaming and push checks.
 */
export async function coreChecks(run: BindingRun): Promise<Json | undefined> {
  const { results, transport } = run
  const unknown = unknownTaskId()
  await results.check('CORE-GET-002', transport, async () =>
    expectError(transport, run.seen, 'GetTask', await run.call('GetTask', { id: unknown }), 'TaskNotFoundError'),
  )

  let task: Json | undefined
  await results.check('CORE-SEND-001', transport, async () => {
    const answer = await run.call('SendMessage', textMessage('hello'))
    const value = answer.value
    if (!value) return fail('a SendMessageResponse', actualOf(answer))
    const set = ['task', 'message'].filter((field) => isObject(value[field]))
    if (set.length !== 1) return fail('a SendMessageResponse with exactly one of task and message', describe(value))
    if (isObject(value.task)) {
      task = value.task
      if (typeof task.id === 'string' && !TERMINAL.has(task.status?.state)) run.started.add(task.id)
    }
    return undefined
  })
  if (task) {
    const sent = task
    await results.check('DM-TASK-001', transport, () =>
      isTask(sent) ? undefined : fail('a Task with id and status', describe(sent)),
    )
    await results.check('DM-TASK-002', transport, () => {
      const problem = stateProblem(sent)
      return problem ? fail('a state named TASK_STATE_…', problem) : undefined
    })
  } else {
    const why = 'the agent answered the message without a task'
    for (const id of ['DM-TASK-001', 'DM-TASK-002'] as const) results.skip(id, transport, why)
  }
  const known = task && isTask(task) ? task : undefined

  await checkGetAndList(run, known)
  const ended = await checkCancel(run, known)

  await results.check('CORE-CANCEL-003', transport, async () =>
    expectError(transport, run.seen, 'CancelTask', await run.call('CancelTask', { id: unknown }), 'TaskNotFoundError'),
  )
  await results.check('CORE-ERR-002', transport, async () => {
    const answer = await run.call('SendMessage', {})
    return answer.error && isError(transport, answer.error, 'InvalidParamsError')
      ? undefined
      : fail(inBinding(transport, 'InvalidParamsError'), actualOf(answer))
  })
  await checkVersions(run, known?.id ?? unknown)
  if (run.card.capabilities?.extendedAgentCard === true)
    results.skip('CORE-CAP-003', transport, 'the card declares an extended card')
  else
    await results.check('CORE-CAP-003', transport, async () =>
      expectError(
        transport,
        run.seen,
        'GetExtendedAgentCard',
        await run.call('GetExtendedAgentCard', {}),
        'UnsupportedOperationError',
      ),
    )
  return ended
}

async function checkGetAndList(run: BindingRun, task: Json | undefined): Promise<void> {
  const { results, transport } = run
  const noTask = 'the agent answered the message without a task'
  if (task)
    await results.check('CORE-GET-001', transport, async () => {
      const answer = await run.call('GetTask', { id: task.id })
      const got = answer.value
      if (!isTask(got)) return fail(`the Task ${task.id}`, actualOf(answer))
      if (got.id !== task.id) return fail(`the Task ${task.id}`, `the Task ${describe(got.id)}`)
      const problem = stateProblem(got)
      return problem ? fail('a state named TASK_STATE_…', problem) : undefined
    })
  else results.skip('CORE-GET-001', transport, noTask)

  await results.check('CORE-LIST-002', transport, async () => {
    const answer = await run.call('ListTasks', { pageSize: 1 })
    return pageProblem(answer.value, 1) ?? (answer.value ? undefined : fail('a ListTasksResponse', actualOf(answer)))
  })
  if (task && typeof task.contextId === 'string')
    await results.check('CORE-LIST-004', transport, async () => {
      const answer = await run.call('ListTasks', { contextId: task.contextId })
      const page = answer.value
      if (!page) return fail('a ListTasksResponse', actualOf(answer))
      const problem = pageProblem(page)
      if (problem) return problem
      if (!page.tasks.some((listed: unknown) => isObject(listed) && listed.id === task.id))
        return fail(`the task ${task.id} listed`, `tasks ${describe(page.tasks.map((listed: Json) => listed?.id))}`)
      // ProtoJSON leaves out a field at its default: no nextPageToken is the empty one.
      if ((page.nextPageToken ?? '') !== '')
        return fail('nextPageToken "" on the last page', `nextPageToken ${describe(page.nextPageToken)}`)
      return undefined
    })
  else results.skip('CORE-LIST-004', transport, task ? 'the task has no contextId' : noTask)
}

/** What is wrong with a ListTasks page, if anything. */
function pageProblem(page: Json | undefined, pageSize?: number): Verdict {
  if (!page) return undefined
  if (!Array.isArray(page.tasks)) return fail('a ListTasksResponse with tasks', describe(page))
  if (pageSize !== undefined && page.tasks.length > pageSize)
    return fail(`at most ${pageSize} task`, `${page.tasks.length} tasks`)
  if (page.nextPageToken !== undefined && typeof page.nextPageToken !== 'string')
    return fail('nextPageToken a string', describe(page.nextPageToken))
  const bad = page.tasks.find((listed: unknown) => !isTask(listed))
  return bad === undefined ? undefined : fail('Tasks with id and status', describe(bad))
}

/** Cancels the task when it is at rest, then asks again of the ended task; answers it ended, if it did. */
async function checkCancel(run: BindingRun, task: Json | undefined): Promise<Json | undefined> {
  const { results, transport } = run
  if (!task) {
    for (const id of ['CORE-CANCEL-001', 'CORE-CANCEL-002'] as const)
      results.skip(id, transport, 'the agent answered the message without a task')
    return undefined
  }
  let ended: Json | undefined = TERMINAL.has(task.status.state) ? task : undefined
  if (ended) results.skip('CORE-CANCEL-001', transport, `the task came back ${task.status.state}: nothing at rest`)
  else
    await results.check('CORE-CANCEL-001', transport, async () => {
      const answer = await run.call('CancelTask', { id: task.id })
      const state = answer.value?.status?.state
      if (state === 'TASK_STATE_CANCELED') {
        ended = answer.value
        run.started.delete(task.id)
        return undefined
      }
      return fail('the Task, TASK_STATE_CANCELED', answer.value ? `state ${describe(state)}` : actualOf(answer))
    })
  if (!ended) {
    results.skip('CORE-CANCEL-002', transport, 'the task did not end')
    return undefined
  }
  await results.check('CORE-CANCEL-002', transport, async () =>
    expectError(
      transport,
      run.seen,
      'CancelTask',
      await run.call('CancelTask', { id: task.id }),
      'TaskNotCancelableError',
    ),
  )
  return ended
}

/** An unsupported A2A-Version, and none at all (§3.6.2). */
async function checkVersions(run: BindingRun, taskId: string): Promise<void> {
  const { results, transport } = run
  await results.check('VER-SERVER-002', transport, async () =>
    expectError(
      transport,
      run.seen,
      'GetTask',
      await run.call('GetTask', { id: taskId }, { version: '99.0' }),
      'VersionNotSupportedError',
    ),
  )
  await results.check('VER-SERVER-003', transport, async () => {
    const answer = await run.call('GetTask', { id: taskId }, { version: null })
    // Read as 0.3: served (an interface that also speaks 0.3 by the same name, or one lenient with v1.0 methods),
    // or refused as a version it does not speak. The kit asks only for an answer in the binding.
    if (answer.value) return undefined
    const allowed = ['VersionNotSupportedError', 'TaskNotFoundError', 'MethodNotFoundError'] as const
    if (answer.error && allowed.some((name) => isError(transport, answer.error!, name))) return undefined
    return fail(`a result, or ${inBinding(transport, 'VersionNotSupportedError')}`, actualOf(answer))
  })
}
