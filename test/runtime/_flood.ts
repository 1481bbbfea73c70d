import { Agent, request } from 'node:http'
import { type FixtureAgent, type FixtureProbe, startFixtureAgent } from './_fixture-process.ts'
import { userMessage } from './_messages.ts'

/**
 * Floods of large messages against test/fixtures/flood-agent.mjs as its own process (its memory read from
 * /proc), for test/runtime/store-bytes.test.ts and test/soak/flood.soak.ts.
 */

export interface FloodProbe extends FixtureProbe {
  /** Tasks the store keeps and their bytes as it counts them. */
  storeSize: number
  storeBytes: number
}

export type FloodAgent = FixtureAgent<FloodProbe>

/** Starts the fixture with `env` (the store's A2A_* settings) and resolves once it listens. */
export const startFloodAgent = (env: Record<string, string> = {}) =>
  startFixtureAgent<FloodProbe>('flood-agent.mjs', env)

/** A JSON-RPC call on `agent` (keep-alive connections), its answer parsed. */
export function rpc(
  port: number,
  method: string,
  params: unknown,
  options: { agent?: Agent; headers?: Record<string, string>; raw?: string } = {},
): Promise<{ status: number; body: any }> {
  // `raw`: the whole body as given (the method and params then unused).
  const payload = options.raw ?? JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        agent: options.agent ?? false,
        headers: { 'content-type': 'application/json', ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          try {
            resolve({ status: res.statusCode!, body: JSON.parse(text) })
          } catch {
            resolve({ status: res.statusCode!, body: { unparsed: text.slice(0, 500) } })
          }
        })
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}

export interface FloodResult {
  /** Ids of the tasks answered `completed` with the whole echo, in the order their answers arrived. */
  acknowledged: string[]
  /** Answers that were anything else (at most the first 20 described). */
  problems: string[]
  problemCount: number
  ms: number
}

/**
 * `count` message/send of a text of `textChars` characters, `concurrency` at a time, each answer checked: the
 * task completed with the text echoed whole. `onProgress` hears the count answered so far.
 */
export async function flood(
  port: number,
  options: { count: number; concurrency: number; textChars: number; onProgress?: (done: number) => void },
): Promise<FloodResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency })
  const started = performance.now()
  const acknowledged: string[] = []
  const problems: string[] = []
  let problemCount = 0
  let next = 0
  const worker = async () => {
    while (next < options.count) {
      const index = next++
      // A different text each time (its number first), so nothing can be shared between tasks.
      const text = `${index} `.padEnd(options.textChars, 'abcdefghijklmnopqrstuvwxyz')
      try {
        const { status, body } = await rpc(port, 'message/send', userMessage(text), { agent })
        const task = body.result
        const echoed = task?.artifacts?.[0]?.parts?.[0]?.text
        if (status === 200 && task?.status?.state === 'completed' && echoed === `Echo: ${text}`)
          acknowledged.push(task.id)
        else if (problemCount++ < 20)
          problems.push(`#${index}: HTTP ${status} ${JSON.stringify(body.error ?? task?.status ?? body).slice(0, 300)}`)
      } catch (error) {
        if (problemCount++ < 20) problems.push(`#${index}: ${(error as Error).message}`)
      }
      options.onProgress?.(acknowledged.length + problemCount)
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, worker))
  agent.destroy()
  return { acknowledged, problems, problemCount, ms: performance.now() - started }
}
