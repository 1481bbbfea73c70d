import type { A2AAppOptions, Agent } from 'a2a-runtime'
import { type A2AClient, type ConnectOptions, connect } from '../../runtime/src/client/client.ts'
import type { Message, Task } from '../../runtime/src/client/types.ts'
import { serveOnLoopback } from '../_loopback-agents.ts'
import { sdkTestAgent } from '../_sdk-v1.ts'

/**
 * The agents the client's tests talk to, each on 127.0.0.1 at a free port and closed after the test that started
 * it: this runtime's (serveAgent, in-process) and one on the official SDK's server.
 */

/** This runtime serving `agent` (by default sdkTestAgent, streaming and push on); its base URL. */
export async function startRuntimeAgent(
  options: A2AAppOptions & { agent?: Agent; waitMs?: number } = {},
): Promise<string> {
  const { agent, waitMs, ...appOptions } = options
  const served =
    agent ??
    sdkTestAgent(
      {
        name: 'Runtime Echo',
        description: 'Echoes in chunks',
        capabilities: { streaming: true, pushNotifications: true },
      },
      { waitMs: waitMs ?? 10_000 },
    )
  return serveOnLoopback(served, appOptions)
}

/** A client of the agent whose card is at (or under) `agentCard`, speaking `binding`. */
export const connectOver = (agentCard: string, binding: string, options: Partial<ConnectOptions> = {}) =>
  connect({ agentCard, transports: [binding], ...options })

export const userMessage = (text: string, extra: Partial<Message> = {}): Message => ({
  messageId: crypto.randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text }],
  ...extra,
})

/** The text of a task's artifacts, chunks joined. */
export const answerText = (task: Task) =>
  (task.artifacts ?? []).flatMap((artifact) => artifact.parts.map((part) => part.text ?? '')).join('')

/** Every event of a stream, in order. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const events: T[] = []
  for await (const event of stream) events.push(event)
  return events
}

export { afterThisTest, startSdkAgent } from '../_loopback-agents.ts'
export type { A2AClient }
