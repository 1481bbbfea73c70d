import { randomUUID } from 'node:crypto'
import type { Finding } from './_card-check.js'
import { redirectTarget } from './_client.js'

const TERMINAL_OR_WAITING = new Set(['completed', 'failed', 'canceled', 'rejected', 'input-required', 'auth-required'])
const SSE_FRAME = /^data: [^\n]+$/

interface ProbeOptions {
  /** Sent with the probes when the card declares authentication. */
  headers: Record<string, string>
  /** How long a task may take to settle. */
  timeoutMs: number
}

/** What the probes found, and whether they stopped at the door (a redirect, refused credentials) before the agent. */
export interface LiveFindings {
  findings: Finding[]
  stopped: boolean
}

const message = (text: string) => ({
  message: { role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text }] },
})

/**
 * Probes a running agent for the platform spec's troubleshooting conditions: a message/send that never
 * settles, streaming declared without a proper stream, authentication declared but not enforced (or enforced
 * but not declared). Each problem is a finding; the card itself is checked separately.
 */
// biome-ignore lint/suspicious/noExplicitAny: the card as the agent served it, each field checked where it is read
export async function probeLive(base: URL, card: Record<string, any>, options: ProbeOptions): Promise<LiveFindings> {
  const findings: Finding[] = []
  const endpoint = base.href
  const post = (method: string, params: unknown, headers: Record<string, string> = options.headers) =>
    fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
      // Not followed: the credentials would go along to wherever the redirect points.
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
    })

  // Authentication: what the card says must be what the server does.
  const declared = Array.isArray(card.authentication?.schemes) && card.authentication.schemes.length > 0
  const anonymous = await post('tasks/get', { id: 'probe-unknown-task' }, {}).catch(() => undefined)
  const redirected = anonymous && redirectTarget(anonymous, endpoint)
  if (redirected) {
    // Whatever is there is another address: probing it is the user's call, with the URL it points to.
    await anonymous.body?.cancel()
    findings.push({
      level: 'error',
      path: 'endpoint',
      message: `${endpoint} redirects JSON-RPC requests to ${redirected} (HTTP ${anonymous.status}); not followed, so nothing else was probed and no credentials were sent`,
      hint: `serve JSON-RPC at the card's url, or validate ${redirected} if that is the agent`,
    })
    return { findings, stopped: true }
  }
  if (anonymous) {
    if (declared && anonymous.status !== 401) {
      findings.push({
        level: 'error',
        path: 'authentication',
        message: `the card declares ${card.authentication.schemes.join(', ')} but a request without credentials got HTTP ${anonymous.status}`,
        hint: 'enforce the declared scheme on every JSON-RPC request',
      })
    }
    if (!declared && anonymous.status === 401) {
      findings.push({
        level: 'error',
        path: 'authentication',
        message: 'the server answers 401 but the card declares no authentication',
        hint: 'declare authentication.schemes on the card so clients send credentials',
      })
    }
  }

  // message/send must settle: a task stuck in working means some path of the agent never ends it.
  try {
    const response = await post('message/send', message('hello'))
    const elsewhere = redirectTarget(response, endpoint)
    if (elsewhere) {
      await response.body?.cancel()
      findings.push({
        level: 'error',
        path: 'message/send',
        message: `redirected to ${elsewhere} (HTTP ${response.status}); not followed, so nothing else was probed and the credentials were not sent there`,
        hint: `serve JSON-RPC at the card's url, or validate ${elsewhere} if that is the agent`,
      })
      return { findings, stopped: true }
    }
    const refused = credentialsProblem(response.status, options.headers)
    if (refused) {
      // The probes cannot get past the door: saying why beats misreading the 401 as the agent's defects.
      await response.body?.cancel()
      findings.push(refused)
      return { findings, stopped: true }
    }
    const reply = (await response.json()) as {
      result?: { kind?: string; status?: { state?: string } }
      error?: { code: number; message: string }
    }
    // A Message (an agent that replies, on the A2A v0.3 dialect) is an answer that ended its exchange.
    const state = reply.result?.kind === 'message' ? 'completed' : reply.result?.status?.state
    if (reply.error)
      findings.push({
        level: 'error',
        path: 'message/send',
        message: `answered error ${reply.error.code}: ${reply.error.message}`,
        hint: 'message/send must accept a plain text message',
      })
    else if (!state || !TERMINAL_OR_WAITING.has(state))
      findings.push({
        level: 'error',
        path: 'message/send',
        message: `the task came back ${state ?? 'without a state'}, not ended`,
        hint: 'end every path of the agent with complete, fail or cancel',
      })
  } catch (error) {
    findings.push({
      level: 'error',
      path: 'message/send',
      message: `no answer within ${options.timeoutMs} ms (${(error as Error).name})`,
      hint: 'end every path of the agent with complete, fail or cancel',
    })
  }

  // Streaming declared: the spec's headers, `data: <json>` frames, and an end.
  if (card.capabilities?.streaming === true) {
    try {
      const response = await post('message/stream', message('hello'))
      const type = response.headers.get('content-type') ?? ''
      if (!type.startsWith('text/event-stream')) {
        findings.push({
          level: 'error',
          path: 'capabilities.streaming',
          message: `message/stream answered ${type || 'no content type'}, not text/event-stream`,
          hint: 'serve message/stream as server-sent events, or set capabilities.streaming to false',
        })
      } else {
        if (response.headers.get('cache-control') !== 'no-cache')
          findings.push({
            level: 'warning',
            path: 'capabilities.streaming',
            message: 'the stream lacks Cache-Control: no-cache',
            hint: 'send Cache-Control: no-cache so proxies do not buffer it',
          })
        const frames = (await response.text()).split('\n\n').filter(Boolean)
        const bad = frames.find((frame) => !SSE_FRAME.test(frame))
        if (frames.length === 0)
          findings.push({
            level: 'error',
            path: 'capabilities.streaming',
            message: 'the stream closed without an event',
            hint: 'send status and artifact events, ending with the final status',
          })
        else if (bad)
          findings.push({
            level: 'error',
            path: 'capabilities.streaming',
            message: `a stream event is not framed as "data: <json>" and a blank line: ${JSON.stringify(bad.slice(0, 60))}`,
            hint: 'write each event as one data: line followed by a blank line',
          })
      }
    } catch (error) {
      findings.push({
        level: 'error',
        path: 'capabilities.streaming',
        message: `message/stream did not end within ${options.timeoutMs} ms (${(error as Error).name})`,
        hint: 'close the stream after the final status event',
      })
    }
  }
  return { findings, stopped: false }
}

const HOW_TO_PASS =
  "pass --token <token> or --api-key <key>, or set A2A_BEARER_TOKEN / A2A_API_KEY in the project's .env (offered to agents on this machine only)"

/** A 401 or 403 to the probes' requests: what the agent wants and how to give it. */
function credentialsProblem(status: number, headers: Record<string, string>): Finding | undefined {
  const sent = Object.keys(headers).some((name) => name === 'authorization' || name === 'x-api-key')
  if (status === 401) {
    return sent
      ? {
          level: 'error',
          path: 'authentication',
          message: 'HTTP 401: the agent did not accept the credentials given, so nothing else was probed',
          hint: `check the token or key; ${HOW_TO_PASS}`,
        }
      : {
          level: 'error',
          path: 'authentication',
          message: 'HTTP 401: the agent needs credentials, so nothing else was probed',
          hint: HOW_TO_PASS,
        }
  }
  if (status === 403) {
    return {
      level: 'error',
      path: 'authentication',
      message: `HTTP 403: the agent refused the ${sent ? 'credentials given' : 'request without credentials'}, so nothing else was probed`,
      hint: sent ? 'use credentials the agent allows' : HOW_TO_PASS,
    }
  }
  return undefined
}
