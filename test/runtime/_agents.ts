import { type Agent, type AgentDefinition, defineAgent } from 'a2a-runtime'
import type { AgentCardInput } from '../../runtime/src/types.ts'

const card = (overrides: Partial<AgentCardInput> = {}): AgentCardInput => ({
  name: 'Test Agent',
  description: 'An agent for the protocol suite',
  version: '1.2.3',
  skills: [{ id: 'echo', name: 'Echo', description: 'Repeats the message', tags: ['test'], examples: ['hello'] }],
  ...overrides,
})

export const agent = (
  execute: AgentDefinition['execute'],
  overrides: Partial<Omit<AgentDefinition, 'card'>> & { card?: Partial<AgentCardInput> } = {},
): Agent => defineAgent({ ...overrides, card: card(overrides.card), execute })

/** Answers at once: one artifact with the user's text. */
export const echoAgent = agent((ctx, task) => {
  task.artifact(`Echo: ${ctx.text}`)
  task.complete()
})

/** Progress, a short wait, the answer: the documented streaming flow. */
export const progressAgent = agent(async (ctx, task) => {
  task.working('Looking it up…')
  await new Promise((resolve) => setTimeout(resolve, 5))
  task.artifact(`Answer: ${ctx.text}`)
  task.complete()
})

/** Sends "Hel", "lo", "!" as three chunks of one artifact, the last one marked lastChunk. */
export const chunkedAgent = agent((_ctx, task) => {
  const id = task.artifact('Hel', { lastChunk: false })
  task.artifact('lo', { artifactId: id, append: true, lastChunk: false })
  task.artifact('!', { artifactId: id, append: true, lastChunk: true })
  task.complete()
})

/** A promise the test settles by hand. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

/**
 * Works until the test releases it or the task is aborted, then answers. `seen` records what the agent
 * observed so tests can check the AbortSignal.
 */
export function gatedAgent(options: { cancelable: boolean; streaming?: boolean } = { cancelable: true }) {
  const release = deferred()
  const started = deferred<string>()
  const seen = { aborted: false, cancelCalls: 0 }
  const definition = agent(
    async (ctx, task) => {
      task.working('started')
      started.resolve(ctx.taskId)
      const aborted = new Promise<void>((resolve) =>
        ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
      )
      await Promise.race([release.promise, aborted])
      seen.aborted = ctx.signal.aborted
      task.artifact('finished')
      task.complete()
    },
    {
      card: { capabilities: { streaming: options.streaming ?? true } },
      ...(options.cancelable && {
        cancel: () => {
          seen.cancelCalls++
        },
      }),
    },
  )
  return { agent: definition, release: () => release.resolve(), started: started.promise, seen }
}
