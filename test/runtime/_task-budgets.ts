import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { assertRuntimeBuilt } from './_load-process.ts'
import { call, rpcBody } from './_slow-readers.ts'

/**
 * test/fixtures/task-budgets-agent.mjs as its own process (its memory read from /proc), for
 * test/runtime/task-budgets.test.ts and test/soak/follow-ups.soak.ts.
 */

const FIXTURE = fileURLToPath(new URL('../fixtures/task-budgets-agent.mjs', import.meta.url))

export interface BudgetsProbe {
  /** Moves the agent made after the runtime had failed its task (refused with TaskTerminalError). */
  lateMoves: number
  /** `hold` tasks the agent has completed (they may have left the store since). */
  completedHolds: number
  logged: { warn: number; error: number; last: string[] }
  memory: NodeJS.MemoryUsage
}

export interface BudgetsAgent {
  pid: number
  port: number
  probe(options?: { gc?: boolean }): Promise<BudgetsProbe>
  /** Lets every held task complete. */
  release(): void
  kill(): Promise<void>
}

/** Starts the fixture with `env` (the runtime's A2A_* budgets) and resolves once it listens. */
export async function startBudgetsAgent(env: Record<string, string> = {}): Promise<BudgetsAgent> {
  if (!env.A2A_RUNTIME_ENTRY) assertRuntimeBuilt()
  const child: ChildProcess = spawn(process.execPath, ['--expose-gc', FIXTURE], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-16_384)))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
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
  const waiting = new Map<number, (probe: BudgetsProbe) => void>()
  child.on('message', (message: { type?: string; id?: number } & BudgetsProbe) => {
    if (message?.type !== 'probe' || message.id === undefined) return
    waiting.get(message.id)?.(message)
    waiting.delete(message.id)
  })
  return {
    pid: child.pid!,
    port: Number(new URL(url).port),
    probe(options = {}) {
      const id = ++nextId
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id)
          reject(new Error('the agent process did not answer a probe within 10 s'))
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

export interface RpcAnswer {
  status: number
  headers: Record<string, unknown>
  /** The parsed JSON-RPC response. */
  body: { result?: any; error?: { code: number; message: string; data?: unknown } }
  /** Its length in characters. */
  chars: number
  ms: number
}

/** One JSON-RPC call, its answer read whole and parsed. */
export async function rpc(port: number, method: string, params: unknown, headers: Record<string, string> = {}): Promise<RpcAnswer> {
  const answer = await call(port, rpcBody(method, params), headers)
  return { status: answer.status, headers: answer.headers, body: JSON.parse(answer.text), chars: answer.text.length, ms: answer.ms }
}

let messages = 0
/** message/send params (platform dialect) with a text part, continuing `taskId` when given. */
export function userText(text: string, taskId?: string, configuration?: Record<string, unknown>) {
  const message: Record<string, unknown> = { role: 'user', messageId: `budget-${++messages}`, parts: [{ kind: 'text', text }] }
  if (taskId !== undefined) message.taskId = taskId
  return configuration ? { message, configuration } : { message }
}

/** A text that fills a request body of about `bytes` (under maxBodySize's 1 MiB when given 1 MiB). */
export const chatText = (bytes: number) => 'chat '.padEnd(bytes - 512, 'x')

/** tasks/get in the platform dialect, A2A v0.3 and A2A v1.0 (GetTask), as each dialect asks it. */
export const GET_TASK_DIALECTS = [
  { dialect: 'platform', method: 'tasks/get', headers: {} },
  { dialect: 'A2A v0.3', method: 'tasks/get', headers: { 'A2A-Version': '0.3' } },
  { dialect: 'A2A v1.0', method: 'GetTask', headers: { 'A2A-Version': '1.0' } },
] as const
