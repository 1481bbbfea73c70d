import { type A2AAppOptions, type Agent, serveAgent } from 'a2a-runtime'
import { afterEach } from 'vitest'
import { type SdkV1Agent, type SdkV1AgentOptions, startSdkV1Agent } from './fixtures/sdk-v1-server.ts'

/**
 * Agents served in the test's process on 127.0.0.1 at free ports (this runtime's, and one on the official SDK's
 * server), and anything else a test gives `afterThisTest`: closed after the test that started them, last first.
 */

const closing: Array<() => Promise<unknown>> = []

afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close()
})

/** Runs `close` after the test, with the agents. */
export const afterThisTest = (close: () => Promise<unknown>) => closing.push(close)

/** This runtime serving `agent` without a log (push to loopback webhooks allowed); its base URL. */
export async function serveOnLoopback(agent: Agent, options: Omit<A2AAppOptions, 'logger'> = {}): Promise<string> {
  const server = await serveAgent(agent, {
    push: { allow: ['127.0.0.1'], allowHttp: true },
    ...options,
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  })
  afterThisTest(() => server.close())
  return server.url
}

/** An agent on the official SDK's server. */
export async function startSdkAgent(options: SdkV1AgentOptions = {}): Promise<SdkV1Agent> {
  const agent = await startSdkV1Agent(options)
  afterThisTest(() => agent.close())
  return agent
}
