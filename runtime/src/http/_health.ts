import type { H3, H3Event } from 'h3'
import { FastResponse } from 'srvx'

/**
 * Health checks for platforms that probe the server: `GET /healthz` (the process answers: liveness), `GET /readyz`
 * (it can serve: its store answers and it is not shutting down) and `GET /ping`, the health check of AWS Bedrock
 * AgentCore's container contract. HEAD answers as GET without the body. None is part of an agent card.
 *
 * They answer before the web-origin guard: they say nothing of the agent and move nothing, and a probe must never
 * fail for the name it uses (a kubelet sends `Host: <pod IP>:<port>`, allowed anyway, but a load balancer's or a
 * platform's health check may name a host the agent was not told of, and a 403 would have a healthy instance
 * replaced). An answer is never cached (`cache-control: no-store`): a proxy must not keep one.
 */

/** The health checks' paths at the server's root: the request log shows them as they are, no agent may be named so. */
export const HEALTH_PATHS = ['/healthz', '/readyz', '/ping'] as const

/** What the health routes read of the server. */
export interface HealthSource {
  /** Shutting down: tasks drain, no new one is taken. */
  draining(): boolean
  /** How many tasks run now (AgentCore's `HealthyBusy`). */
  running(): number
  /** Why the task store cannot serve now; `undefined` when it can (see stores/_ready.ts, `StoreProbe`). */
  storeProblem(): Promise<string | undefined>
}

const HEADERS: Array<[string, string]> = [
  ['content-type', 'application/json'],
  ['cache-control', 'no-store'],
]
const ALIVE = JSON.stringify({ status: 'ok' })
const READY = JSON.stringify({ status: 'ready' })

/** Adds the health routes to the app's routes; static paths win over the app's catch-all route whatever the order. */
export function serveHealth(h3: H3, source: HealthSource): void {
  const ping = new PingStatus(source)
  const routes: Record<(typeof HEALTH_PATHS)[number], () => Response | Promise<Response>> = {
    '/healthz': () => json(200, ALIVE),
    '/readyz': () => readiness(source),
    '/ping': () => json(200, ping.body()),
  }
  for (const path of HEALTH_PATHS) {
    const answer = routes[path]
    h3.get(path, answer)
    // HEAD as GET without the body (RFC 9110 §9.3.2): some probes and monitors ask with HEAD.
    h3.head(path, async (_event: H3Event) => {
      const response = await answer()
      return new FastResponse(null, { status: response.status, headers: HEADERS })
    })
  }
}

async function readiness(source: HealthSource): Promise<Response> {
  // Draining first: a server shutting down is out of rotation whatever its store says, and asks nothing of it.
  if (source.draining()) return notReady('draining: the server is shutting down')
  const problem = await source.storeProblem()
  return problem === undefined ? json(200, READY) : notReady(problem)
}

/** `/readyz`'s 503 (the Worker answers it too, when the agent's Durable Object does not answer). */
export const notReady = (reason: string): Response => json(503, JSON.stringify({ status: 'unavailable', reason }))

/**
 * `/healthz`'s answer when `request` asks for it, else `undefined`: a Cloudflare Worker answers it without waking
 * the agent's Durable Object (the isolate answering is what is alive; readiness asks the object).
 */
export function aliveAnswer(request: Request, pathname: string): Response | undefined {
  if (pathname !== '/healthz' || (request.method !== 'GET' && request.method !== 'HEAD')) return undefined
  return new FastResponse(request.method === 'HEAD' ? null : ALIVE, { status: 200, headers: HEADERS })
}

const json = (status: number, body: string): Response => new FastResponse(body, { status, headers: HEADERS })

/**
 * AgentCore's ping: `Healthy` when idle, `HealthyBusy` while tasks run, and `time_of_last_update`, the Unix time in
 * seconds of the last change of status (AgentCore's idle timeout reads it: without it a busy session is stopped
 * at the idle timeout all the same). A change is seen when a ping reads it; the first status dates from the start.
 */
class PingStatus {
  readonly #source: HealthSource
  #busy = false
  #since = Math.floor(Date.now() / 1000)

  constructor(source: HealthSource) {
    this.#source = source
  }

  body(): string {
    const busy = this.#source.running() > 0
    if (busy !== this.#busy) {
      this.#busy = busy
      this.#since = Math.floor(Date.now() / 1000)
    }
    return JSON.stringify({ status: busy ? 'HealthyBusy' : 'Healthy', time_of_last_update: this.#since })
  }
}
