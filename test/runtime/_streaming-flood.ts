import { type FloodAgent, rpc, startFloodAgent } from './_flood.ts'
import { MiB, rssOf } from './_slow-readers.ts'

/**
 * The streaming template's agent (test/fixtures/flood-agent.mjs `words …`: a word a chunk, 20 ms apart) under a
 * flood of 1 MiB messages on a 512 MiB heap, default settings: every admitted task would stream ~100,000 words
 * for half an hour. For test/runtime/streaming-flood.test.ts and test/soak/streaming-flood.soak.ts.
 */

/** 1 MB of words (~10 characters each), a different one per send. */
const wordsText = (i: number) => `words ${i} `.padEnd(1_000_000, ' lorem ipsum dolor sit amet consectetur adipiscing')

export interface StreamingFloodResult {
  /** Sends the server took (a task id), refused as busy (429), and anything else. */
  taken: number
  busy: number
  problems: string[]
  /** RSS once a second, from the start. */
  rss: number[]
}

export const startStreamingAgent = (): Promise<FloodAgent> =>
  startFloodAgent({ NODE_OPTIONS: '--max-old-space-size=512' })

/**
 * Sends from `clients` clients for `seconds`, each `message/send` without blocking (the task runs on), waiting
 * 100 ms after a 429 (as a client honouring Retry-After would, only sooner).
 */
export async function streamingFlood(server: FloodAgent, seconds: number, clients = 8): Promise<StreamingFloodResult> {
  const result: StreamingFloodResult = { taken: 0, busy: 0, problems: [], rss: [] }
  const sampler = setInterval(() => result.rss.push(rssOf(server.pid)?.rss ?? 0), 1000)
  const until = performance.now() + seconds * 1000
  let next = 0
  const client = async () => {
    while (performance.now() < until && server.alive()) {
      const i = next++
      try {
        const params = {
          message: { role: 'user', messageId: `flood-${i}`, parts: [{ kind: 'text', text: wordsText(i) }] },
          configuration: { blocking: false },
        }
        // A connection of its own per send: the server closes the connection of a 429, and a kept-alive socket
        // reused at that moment is reset under the next request (a client's race, not the server's answer).
        const { status, body } = await rpc(server.port, 'message/send', params)
        if (status === 200 && body.result?.id) result.taken++
        else if (status === 429) {
          result.busy++
          await new Promise((resolve) => setTimeout(resolve, 100))
        } else if (result.problems.length < 20)
          result.problems.push(`#${i}: HTTP ${status} ${JSON.stringify(body).slice(0, 300)}`)
      } catch (error) {
        if (result.problems.length < 20) result.problems.push(`#${i}: ${(error as Error).message}`)
      }
    }
  }
  await Promise.all(Array.from({ length: clients }, client))
  clearInterval(sampler)
  return result
}

export const mibOf = (bytes: number) => Math.round(bytes / MiB)
