import { Role, TaskState } from '@a2a-js/sdk'
import { type Agent, defineAgent } from 'a2a-runtime'
import { expect } from 'vitest'

/**
 * What the tests of the official SDK 1.x client share over every transport (JSON-RPC, HTTP+JSON, gRPC): an agent
 * that behaves like a generated one, a message as the SDK types it, the text of a task's answer, and the first
 * exchange every transport must carry the same way.
 */

/** Resolves after `ms`, or at once when `signal` aborts. */
export const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        resolve()
      },
      { once: true },
    )
  })

/** Like a generated agent: progress, an answer in chunks, a question on "ask", long work on "wait" (until canceled). */
export const sdkTestAgent = (
  card: Partial<Agent['card']> & Pick<Agent['card'], 'name' | 'description'>,
  { waitMs = 10_000, chunkPauseMs = 0 }: { waitMs?: number; chunkPauseMs?: number } = {},
): Agent =>
  defineAgent({
    card: { skills: [{ id: 'echo', name: 'Echo', description: 'Echoes', tags: ['echo'] }], ...card },
    async execute(ctx, task) {
      if (ctx.text === 'ask' && ctx.history.length === 1) return task.inputRequired('Which city?')
      task.working('On it')
      if (ctx.text === 'wait') {
        await pause(waitMs, ctx.signal)
        if (ctx.signal.aborted) return
      }
      const words = `Echo: ${ctx.text}`.split(' ')
      let artifactId: string | undefined
      for (const [i, word] of words.entries()) {
        if (chunkPauseMs) await pause(chunkPauseMs)
        artifactId = task.artifact(i === 0 ? word : ` ${word}`, {
          artifactId,
          append: i > 0,
          lastChunk: i === words.length - 1,
        })
      }
      task.complete()
    },
    cancel: (_ctx, task) => task.cancel('Stopped'),
  })

/** A v1.0 message as the SDK 1.x types it. */
export const v1Message = (text: string, taskId = '') => ({
  tenant: '',
  metadata: {},
  configuration: undefined,
  message: {
    messageId: crypto.randomUUID(),
    role: Role.ROLE_USER,
    parts: [
      { content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
    ],
    taskId,
    contextId: '',
    extensions: [],
    metadata: {},
    referenceTaskIds: [],
  },
})

export const v1Text = (task: any): string =>
  task.artifacts.flatMap((artifact: any) => artifact.parts.map((part: any) => part.content.value)).join('')

interface SdkClient {
  sendMessage(params: ReturnType<typeof v1Message>): Promise<unknown>
  sendMessageStream(params: ReturnType<typeof v1Message>): AsyncIterable<unknown>
}

/**
 * The exchange every transport carries alike: a send answered with the completed task, a stream that opens with the
 * Task, carries the answer in three chunks and ends completed. Returns the task sent.
 */
export async function expectSendAndStream(client: SdkClient): Promise<any> {
  const sent: any = await client.sendMessage(v1Message('hello'))
  expect(sent.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
  expect(v1Text(sent)).toBe('Echo: hello')
  const events: any[] = []
  for await (const event of client.sendMessageStream(v1Message('streamed words'))) events.push(event)
  const cases = events.map((event) => event.payload.$case)
  expect(cases[0]).toBe('task')
  expect(cases.filter((c) => c === 'artifactUpdate')).toHaveLength(3)
  expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
  return sent
}

/** A question (input-required) answered by a follow-up naming the task, which ends it on every transport alike. */
export async function expectFollowUp(client: SdkClient): Promise<void> {
  const question: any = await client.sendMessage(v1Message('ask'))
  expect(question.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
  const answer: any = await client.sendMessage(v1Message('Oslo', question.id))
  expect(answer.id).toBe(question.id)
  expect(v1Text(answer)).toBe('Echo: Oslo')
}
