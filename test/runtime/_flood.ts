import { type ChildProcess, spawn } from 'node:child_process'
import { Agent, request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { assertRuntimeBuilt } from './_load-process.ts'

/**
 * Floods of large messages against test/fixtures/flood-agent.mjs as its own process (its memory read from
 * /proc), for test/runtime/store-bytes.test.ts and test/soak/flood.soak.ts.
 */

const FIXTURE = fileURLToPath(new URL('../fixtures/flood-agent.mjs', import.meta.url))

export interface FloodProbe {
  /** Tasks the store keeps and their bytes as it counts them. */
  storeSize: number
  storeBytes: number
  logged: { warn: number; error: number; last: string[] }
  memory: NodeJS.MemoryUsage
}

export interface FloodAgent {
  pid: number
  port: number
  alive(): boolean
  probe(options?: { gc?: boolean }): Promise<FloodProbe>
  release(): void
  kill(): Promise<void>
}

/** Starts the fixture with `env` (the store's A2A_* settings) and resolves once it listens. */
export async function startFloodAgent(env: Record<string, string> = {}): Promise<FloodAgent> {
  if (!env.A2A_RUNTIME_ENTRY) assertRuntimeBuilt()
  const child: ChildProcess = spawn(process.execPath, ['--expose-gc', FIXTURE], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-16_384)))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const alive = () => child.exitCode === null && child.signalCode === null
  const kill = async () => {
    if (alive()) process.kill(child.pid!, 'SIGKILL')
    await exited
  }
  let url: string
  try {
    url = await new Promise<string>((resolve, reject) => {
      let out = ''
      const timer = setTimeout(() => reject(new Error(`the agent process did not listen within 15 s: ${stderr.slice(-1000)}`)), 15_000)
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk
        const match = /^url (\S+)$/m.exec(out)
        if (match) {
          clearTimeout(timer)
          resolve(match[1]!)
        }
      })
      child.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`the agent process exited (${code}) before listening: ${stderr.slice(-1000)}`))
      })
    })
  } catch (error) {
    await kill()
    throw error
  }
  let nextId = 0
  const waiting = new Map<number, (probe: FloodProbe) => void>()
  child.on('message', (message: { type?: string; id?: number } & FloodProbe) => {
    if (message?.type !== 'probe' || message.id === undefined) return
    waiting.get(message.id)?.(message)
    waiting.delete(message.id)
  })
  return {
    pid: child.pid!,
    port: Number(new URL(url).port),
    alive,
    probe(options = {}) {
      const id = ++nextId
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id)
          reject(new Error(`the agent process did not answer a probe within 10 s${alive() ? '' : ` (it exited: ${stderr.slice(-1000)})`}`))
        }, 10_000)
        waiting.set(id, (probe) => {
          clearTimeout(timer)
          resolve(probe)
        })
        child.send({ type: 'probe', id, gc: options.gc === true })
      })
    },
    release: () => child.send({ type: 'release' }),
    kill,
  }
}

/** A JSON-RPC call on `agent` (keep-alive connections), its answer parsed. */
export function rpc(port: number, method: string, params: unknown, options: { agent?: Agent; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any }> {
  const payload = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/', agent: options.agent ?? false, headers: { 'content-type': 'application/json', ...options.headers } },
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

export const userMessage = (text: string) => ({ message: { kind: 'message', role: 'user', messageId: `m-${Math.random().toString(36).slice(2)}`, parts: [{ kind: 'text', text }] } })

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
export async function flood(port: number, options: { count: number; concurrency: number; textChars: number; onProgress?: (done: number) => void }): Promise<FloodResult> {
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
        if (status === 200 && task?.status?.state === 'completed' && echoed === `Echo: ${text}`) acknowledged.push(task.id)
        else if (problemCount++ < 20) problems.push(`#${index}: HTTP ${status} ${JSON.stringify(body.error ?? task?.status ?? body).slice(0, 300)}`)
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
