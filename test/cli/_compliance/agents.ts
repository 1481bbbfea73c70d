import { generateKeyPairSync } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { runtimeDir } from '../../_support.ts'
import { type SdkV1Agent, startSdkV1Agent } from '../../fixtures/sdk-v1-server.ts'

/**
 * The live agents the compliance checks talk to, each on 127.0.0.1 at a free port, shared by every check:
 * - this runtime's agent (serveAgent of the built runtime) with streaming, push notifications, a signed card and
 *   the behaviours the checks provoke (below), the same agent without streaming or push, and one that takes a
 *   bearer token, an API key or an OpenID Connect issuer's JWT and gives an extended card;
 * - the official SDK's server (test/fixtures/sdk-v1-server.ts), v1.0 only, with its interfaces in either order.
 *
 * The runtime agent's behaviours, by the message's text: `ask` pauses for input (INPUT_REQUIRED) and the follow-up
 * is answered; `auth` pauses at AUTH_REQUIRED and the follow-up completes it; `wait` works until canceled; `slow`
 * works a second and a half, then answers; `drip` answers in five chunks 600 ms apart; `fail` fails; `reject`
 * rejects; `reply` answers with a Message and no task; `parts` answers text, data and two files (inline and by URL);
 * anything else is echoed (`Echo: <text>`). Every message it receives is kept in `received`.
 */

type Runtime = typeof import('a2a-runtime')

/** A message as the agent received it (the runtime's shape: `kind` parts, `file.mimeType`). */
export interface Received {
  taskId: string
  contextId: string
  text: string
  parts: Array<Record<string, unknown>>
  /** Who sent it, as the agent's credential check proved (the guarded agent only). */
  subject?: string
}

export interface Agents {
  /** This runtime's agent: streaming, push notifications, a signed card. Its base URL. */
  runtime: string
  /** The same agent without streaming or push notifications. */
  plain: string
  /** The agent that takes credentials (bearer, API key, OIDC JWTs) and gives an extended card. */
  guarded: string
  /** The official SDK's server, its card listing JSON-RPC first. */
  sdk: SdkV1Agent
  /** The same, its card listing HTTP+JSON first. */
  sdkRestFirst: SdkV1Agent
  /** Every message any runtime agent received, in order. */
  received: Received[]
  /** The public key of the runtime agent's card signatures, as a JWKS. */
  jwks: { keys: unknown[] }
  /** A file server for the artifact the `parts` answer gives by URL. */
  files: string
  close(): Promise<void>
}

export const BEARER = 'compliance-bearer-7c1e'
export const API_KEY = 'compliance-api-key-4d2b'
export const FILE_TEXT = 'A report, fetched by its URL.\n'
export const INLINE_BYTES = Buffer.from('%PDF-1.4 compliance\n')

const pause = (ms: number, signal?: AbortSignal) =>
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

export async function startAgents(oidcIssuer: string, oidcAudience: string): Promise<Agents> {
  const runtime: Runtime = await import(pathToFileURL(join(runtimeDir, 'dist/index.js')).href)
  const received: Received[] = []
  const closers: Array<() => Promise<unknown>> = []
  const files = await startFileServer()
  closers.push(files.close)

  const skills = [{ id: 'echo', name: 'Echo', description: 'Says it back', tags: ['echo'] }]
  const define = (card: Record<string, unknown>) =>
    runtime.defineAgent({
      card: {
        name: 'Compliance',
        description: 'Behaves as the compliance checks ask',
        version: '1.0.0',
        skills,
        defaultInputModes: ['*/*'],
        ...card,
      },
      messageReplies: true,
      async execute(ctx, task) {
        received.push({
          taskId: ctx.taskId,
          contextId: ctx.contextId,
          text: ctx.text,
          parts: ctx.parts as unknown as Array<Record<string, unknown>>,
          ...(ctx.principal && { subject: ctx.principal.subject }),
        })
        const first = ctx.history.length === 1
        if (ctx.text === 'ask' && first) return task.inputRequired('Which city?')
        if (ctx.text === 'auth' && first) return task.authRequired('Sign in to the calendar, then reply')
        if (ctx.text === 'fail') return task.fail('No forecast today')
        if (ctx.text === 'reject') return task.reject('Not something I do')
        if (ctx.text === 'reply') return task.reply('A direct answer, no task')
        task.working('On it')
        if (ctx.text === 'wait') {
          await pause(60_000, ctx.signal)
          if (ctx.signal.aborted) return
        }
        if (ctx.text === 'slow') await pause(1500)
        if (ctx.text === 'parts') {
          task.artifact('Plain words of the answer', { name: 'summary' })
          task.artifact({ city: 'Oslo', temperature: 21 }, { name: 'figures' })
          task.artifact(
            [
              {
                kind: 'file',
                file: { name: 'report.pdf', mimeType: 'application/pdf', bytes: INLINE_BYTES.toString('base64') },
              },
              { kind: 'file', file: { name: 'notes.txt', mimeType: 'text/plain', uri: `${files.url}notes.txt` } },
            ],
            { name: 'files' },
          )
          return task.complete()
        }
        // `drip` answers in five chunks 600 ms apart: a stream that lasts a while.
        const words = `Echo: ${ctx.text === 'drip' ? 'drip in five slow chunks' : ctx.text}`.split(' ')
        let artifactId: string | undefined
        for (const [i, word] of words.entries()) {
          if (ctx.text === 'drip' && i > 0) await pause(600)
          artifactId = task.artifact(i === 0 ? word : ` ${word}`, {
            artifactId,
            name: 'answer',
            append: i > 0,
            lastChunk: i === words.length - 1,
          })
        }
        task.complete()
      },
      cancel: (_ctx, task) => task.cancel('Stopped'),
    })

  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid: 'compliance', alg: 'ES256', use: 'sig' }
  const serve = async (agent: ReturnType<Runtime['defineAgent']>, options: Parameters<Runtime['serveAgent']>[1]) => {
    const server = await runtime.serveAgent(agent, {
      push: { allow: ['127.0.0.1'], allowHttp: true },
      ...options,
      port: 0,
      hostname: '127.0.0.1',
      handleSignals: false,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      shutdownTimeoutMs: 100,
    })
    closers.push(() => server.close())
    return server.url
  }
  const [full, plain, guarded, sdk, sdkRestFirst] = await Promise.all([
    serve(define({ capabilities: { streaming: true, pushNotifications: true } }), {
      cardSigning: { key: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), keyId: 'compliance' },
    }),
    serve(define({ capabilities: { streaming: false, pushNotifications: false } }), {}),
    serve(
      define({
        capabilities: { streaming: true },
        authentication: { schemes: ['bearer', 'apiKey', 'oidc'] },
        extendedCard: { skills: [{ id: 'more', name: 'More', description: 'For callers it knows', tags: ['more'] }] },
      }),
      { auth: { bearerTokens: [BEARER], apiKeys: [API_KEY], oidc: { issuer: oidcIssuer, audience: [oidcAudience] } } },
    ),
    startSdkV1Agent({ waitMs: 30_000 }),
    startSdkV1Agent({ bindings: ['HTTP+JSON', 'JSONRPC'], waitMs: 30_000 }),
  ])
  closers.push(sdk.close, sdkRestFirst.close)
  return {
    runtime: full,
    plain,
    guarded,
    sdk,
    sdkRestFirst,
    received,
    jwks: { keys: [publicJwk] },
    files: files.url,
    close: async () => {
      await Promise.all(closers.map((close) => close()))
    },
  }
}

/** Serves `/notes.txt` (FILE_TEXT); anything else is 404. */
async function startFileServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    if (request.url === '/notes.txt') response.writeHead(200, { 'content-type': 'text/plain' }).end(FILE_TEXT)
    else response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
