import { rpc as call } from '../_rpc.ts'
import { API_KEY } from './_agent-process.ts'

/** The credential every request sends unless a test leaves it out. */
const WITH_KEY = { 'x-api-key': API_KEY }

export const rpcBody = (method: string, params: unknown, id: string | number = 'req') =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params })

/**
 * POSTs `body` to the agent's `/` as JSON (unless `headers` says otherwise), with the API key unless `credentials`
 * replaces it.
 */
export const post = (
  url: string,
  body: string,
  headers: Record<string, string> = {},
  credentials: Record<string, string> = WITH_KEY,
) => fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...credentials, ...headers } })

interface RpcReply {
  status: number
  contentType: string | null
  body: any
}

/** A JSON-RPC call with the API key; the answer's status, content type and parsed body. */
export async function rpc(
  url: string,
  method: string,
  params: unknown,
  headers: Record<string, string> = {},
  id: string | number = 'req',
): Promise<RpcReply> {
  const answer = await call(url, method, params, { headers: { ...WITH_KEY, ...headers }, id })
  return { status: answer.status, contentType: answer.headers.get('content-type'), body: answer.body }
}

export async function replyOf(response: Response): Promise<RpcReply> {
  const text = await response.text()
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    body: text ? JSON.parse(text) : undefined,
  }
}
