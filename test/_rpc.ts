/** How a JSON-RPC call is made: extra headers (a credential, `A2A-Version`), the request id. */
export interface RpcOptions {
  headers?: Record<string, string>
  /** Sent as `A2A-Version`: `1.0` or `0.3` pick an official dialect; absent, the agent's own. */
  version?: string
  id?: string | number
}

/**
 * An answer as the client got it: the HTTP status and headers, the body as sent and as parsed (undefined when empty).
 */
export interface RpcAnswer {
  status: number
  headers: Headers
  text: string
  body: any
}

/** One JSON-RPC call over HTTP (fetch), POSTed to `url` as JSON. */
export async function rpc(url: string, method: string, params: unknown, options: RpcOptions = {}): Promise<RpcAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(options.version && { 'a2a-version': options.version }),
      ...options.headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: options.id ?? 1, method, params }),
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined }
}
