import type { AgentCoreRequest } from '../agent.js'

/**
 * The request headers AWS Bedrock AgentCore Runtime documents for the containers it runs, read into `ctx.agentCore`:
 * - `X-Amzn-Bedrock-AgentCore-Runtime-Session-Id`: the session, added to every request (the A2A protocol contract);
 * - `WorkloadAccessToken`: the workload access token Runtime hands the agent for AgentCore Identity;
 * - `X-Amzn-Bedrock-AgentCore-Runtime-Custom-*`: headers the caller passes through (Runtime's header allowlist).
 * Undefined when the request carries none of them, so an agent served elsewhere pays one header read per name.
 */

const SESSION_ID = 'x-amzn-bedrock-agentcore-runtime-session-id'
const WORKLOAD_ACCESS_TOKEN = 'workloadaccesstoken'
const CUSTOM_PREFIX = 'x-amzn-bedrock-agentcore-runtime-custom-'

export function agentCoreRequest(headers: Headers): AgentCoreRequest | undefined {
  const sessionId = headers.get(SESSION_ID) ?? undefined
  const workloadAccessToken = headers.get(WORKLOAD_ACCESS_TOKEN) ?? undefined
  let custom: Record<string, string> | undefined
  for (const [name, value] of headers) {
    if (!name.startsWith(CUSTOM_PREFIX)) continue
    custom ??= Object.create(null) as Record<string, string>
    custom[name] = value
  }
  if (sessionId === undefined && workloadAccessToken === undefined && custom === undefined) return undefined
  return { sessionId, workloadAccessToken, customHeaders: custom ?? {} }
}
