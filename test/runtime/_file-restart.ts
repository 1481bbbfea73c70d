import { Agent } from 'node:http'
import { AMPLIFIED_SHAPES } from './_amplified.ts'
import { type FloodAgent, rpc, startFloodAgent } from './_flood.ts'
import { rssOf } from './_load-process.ts'
import { userMessage } from './_messages.ts'

/**
 * The file store killed in the middle of a flood and started again on its log, for test/runtime/file-restart.test.ts
 * and test/soak/file-restart.soak.ts: the agent is test/fixtures/flood-agent.mjs (the echo template) on
 * A2A_STORE=file:<dir>, in its own process, its memory read from /proc.
 */

const TEXT_CHARS = 1_000_000 // a 1 MiB request body holds this text and its JSON-RPC envelope
const TINY_PARTS = AMPLIFIED_SHAPES.find((shape) => shape.name === 'many tiny text parts')!

/** The i-th message of a flood: every third one of ~37,000 tiny text parts, the others a text of 1 MiB. */
export function floodBody(i: number): { kind: 'text' | 'parts'; body: string; text?: string } {
  if (i % 3 === 2) return { kind: 'parts', body: TINY_PARTS.body(i) }
  // A different text each time (its number first), so nothing can be shared between tasks.
  const text = `${i} `.padEnd(TEXT_CHARS, 'abcdefghijklmnopqrstuvwxyz')
  return {
    kind: 'text',
    body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'message/send', params: userMessage(text) }),
    text,
  }
}

/** A task a flood had answered `completed`: its id, and what its answer said (the echo's length). */
export interface Acknowledged {
  id: string
  kind: 'text' | 'parts'
  echoChars: number
}

export interface KilledFlood {
  /** In the order the answers arrived. */
  acknowledged: Acknowledged[]
  /** Answers that were neither `completed` nor cut by the kill, the first 20. */
  problems: string[]
  /** Sends under way when the process was killed. */
  inFlight: number
  /** The highest RSS the process had reached when it was killed (VmHWM). */
  peakRss: number
}

/**
 * Floods `agent` with `floodBody` messages, `concurrency` at a time, from message number `from`; once `until()`
 * says so (asked after each answer), SIGKILLs it by PID with sends still under way, and resolves once it is gone.
 */
export async function floodThenKill(
  agent: FloodAgent,
  options: { concurrency: number; from?: number; until: (answered: number) => boolean },
): Promise<KilledFlood> {
  const http = new Agent({ keepAlive: true, maxSockets: options.concurrency })
  const acknowledged: Acknowledged[] = []
  const problems: string[] = []
  let next = options.from ?? 0
  let killing: Promise<void> | undefined
  let inFlight = 0
  let killedWith = 0
  let peakRss = Number.NaN
  const worker = async () => {
    while (!killing) {
      const i = next++
      const { kind, body, text } = floodBody(i)
      inFlight++
      try {
        const { status, body: answer } = await rpc(agent.port, 'message/send', undefined, { agent: http, raw: body })
        const echoed: string | undefined = answer.result?.artifacts?.[0]?.parts?.[0]?.text
        const whole = kind === 'text' ? echoed === `Echo: ${text}` : typeof echoed === 'string' && echoed.length > 1000
        if (status === 200 && answer.result?.status?.state === 'completed' && whole) {
          acknowledged.push({ id: answer.result.id, kind, echoChars: echoed!.length })
        } else if (!killing && problems.length < 20)
          problems.push(
            `#${i}: HTTP ${status} ${JSON.stringify(answer.error ?? answer.result?.status ?? answer).slice(0, 300)}`,
          )
      } catch (error) {
        if (!killing && problems.length < 20) problems.push(`#${i}: ${(error as Error).message}`)
      } finally {
        inFlight--
      }
      if (!killing && options.until(acknowledged.length)) {
        // Mid-flood: the other workers' sends are under way.
        killedWith = inFlight
        peakRss = rssOf(agent.pid)?.peak ?? Number.NaN
        killing = agent.kill()
      }
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, worker))
  await killing
  http.destroy()
  return { acknowledged, problems, inFlight: killedWith, peakRss }
}

export interface Restarted {
  agent: FloodAgent
  /** From the spawn to the agent listening (its store read back). */
  ms: number
  /** The highest RSS of the process so far (VmHWM): its start, the restore in it. */
  peakRss: number
}

/** Starts the agent on its store again, and measures how long it took to listen and the RSS it reached meanwhile. */
export async function restart(env: Record<string, string>): Promise<Restarted> {
  const started = performance.now()
  const agent = await startFloodAgent(env)
  const ms = performance.now() - started
  return { agent, ms, peakRss: rssOf(agent.pid)?.peak ?? Number.NaN }
}

/** tasks/get of each id: its answer (the task, or the error). */
export async function getEach(port: number, ids: string[]): Promise<Array<{ id: string; task?: any; error?: any }>> {
  const http = new Agent({ keepAlive: true, maxSockets: 4 })
  try {
    const answers = []
    for (const id of ids) {
      const { body } = await rpc(port, 'tasks/get', { id, historyLength: 0 }, { agent: http })
      answers.push({ id, task: body.result, error: body.error })
    }
    return answers
  } finally {
    http.destroy()
  }
}
