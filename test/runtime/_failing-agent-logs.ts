import { trace } from '@opentelemetry/api'
import { createA2AApp, type ServeOptions, serveAgent } from 'a2a-runtime'
import { afterEach, beforeEach, vi } from 'vitest'
import { agent } from './_agents.ts'
import { userMessage } from './_messages.ts'

// What the log tests share: an agent that fails with a line of its own, the apps and servers it runs in (closed after
// each test), and what the runtime's console logger writes meanwhile.

type ConsoleLevel = 'debug' | 'info' | 'warn' | 'error'

/**
 * What the console logger writes in each test, per console method, as the strings it was given. Call at the top of a
 * test file: it spies on the console for each test and empties the lists before the next. After each test it closes
 * what `closeAfterTest` was given before it lets the console go, so what a closing app writes is caught too.
 */
export function consoleWrites(): Record<ConsoleLevel, string[]> {
  const written: Record<ConsoleLevel, string[]> = { debug: [], info: [], warn: [], error: [] }
  beforeEach(() => {
    for (const level of ['debug', 'info', 'warn', 'error'] as const) {
      written[level].length = 0
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        written[level].push(args.map(String).join(' '))
      })
    }
  })
  afterEach(() => {
    vi.restoreAllMocks()
  })
  // Registered after the console's hook, so run before it (vitest runs a file's afterEach hooks last first).
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()))
  })
  return written
}

const closers: Array<() => Promise<void>> = []

/** Closes `close`'s app or server after the test. */
export function closeAfterTest(close: () => Promise<void>) {
  closers.push(close)
}

/** The text of the message `send` sends: no log line may carry it. */
export const SECRET_TEXT = 'the words of the message'

/** Throws while running its task (a cause under the error), after logging a line of its own in a span of its own. */
export const failingAgent = agent((ctx) => {
  trace.getTracer('agent').startActiveSpan('agent-work', (span) => {
    ctx.logger.info('The agent is at work')
    span.end()
  })
  throw new Error('boom', { cause: new TypeError('the model answered nothing') })
})

/** An app of the failing agent with `env`, closed after the test. */
export function appOf(env: Record<string, string>, options: Parameters<typeof createA2AApp>[1] = {}) {
  const app = createA2AApp(failingAgent, { env, ...options })
  closeAfterTest(() => app.close())
  return app
}

/** Sends `SECRET_TEXT` to `app` with `message/send` and answers the task. */
export async function send(app: ReturnType<typeof createA2AApp>, headers: Record<string, string> = {}) {
  const answer = await app.fetch(
    new Request('http://localhost/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: userMessage(SECRET_TEXT) }),
    }),
  )
  return ((await answer.json()) as { result: { id: string; status: { state: string } } }).result
}

/**
 * Serves the failing agent on 127.0.0.1 with a free port, logging each request at info (closed after the test), and
 * sends it one message at an address with a secret (`s3cret`) in its query string.
 */
export async function serveWithSecretQuery(env: ServeOptions['env']) {
  const server = await serveAgent(failingAgent, {
    env,
    requestLogLevel: 'info',
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
  })
  closeAfterTest(() => server.close())
  const answer = await fetch(`${server.url}?token=s3cret`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: userMessage('hi') }),
  })
  return { server, answer }
}
