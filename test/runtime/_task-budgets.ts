import { type FixtureAgent, type FixtureProbe, startFixtureAgent } from './_fixture-process.ts'
import { call, rpcBody } from './_slow-readers.ts'

/**
 * test/fixtures/task-budgets-agent.mjs as its own process (its memory read from /proc), for
 * test/runtime/task-budgets.test.ts and test/soak/follow-ups.soak.ts.
 */

export interface BudgetsProbe extends FixtureProbe {
  /** Moves the agent made after the runtime had failed its task (refused with TaskTerminalError). */
  lateMoves: number
  /** `hold` tasks the agent has completed (they may have left the store since). */
  completedHolds: number
}

/** `release()` lets every held task complete. */
export type BudgetsAgent = FixtureAgent<BudgetsProbe>

/** Starts the fixture with `env` (the runtime's A2A_* budgets) and resolves once it listens. */
export const startBudgetsAgent = (env: Record<string, string> = {}) =>
  startFixtureAgent<BudgetsProbe>('task-budgets-agent.mjs', env)

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
export async function rpc(
  port: number,
  method: string,
  params: unknown,
  headers: Record<string, string> = {},
): Promise<RpcAnswer> {
  const answer = await call(port, rpcBody(method, params), headers)
  return {
    status: answer.status,
    headers: answer.headers,
    body: JSON.parse(answer.text),
    chars: answer.text.length,
    ms: answer.ms,
  }
}

let messages = 0
/** message/send params (platform dialect) with a text part, continuing `taskId` when given. */
export function userText(text: string, taskId?: string, configuration?: Record<string, unknown>) {
  const message: Record<string, unknown> = {
    role: 'user',
    messageId: `budget-${++messages}`,
    parts: [{ kind: 'text', text }],
  }
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
