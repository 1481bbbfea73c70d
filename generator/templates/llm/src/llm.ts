/** A minimal client for OpenAI-compatible chat-completions endpoints, streaming. */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

export interface LlmConfig {
  baseUrl: string
  apiKey: string | undefined
  model: string
}

/** Read at call time, so `.env` edits and tests apply without a restart. */
export function readLlmConfig(env = process.env): LlmConfig {
  return {
    baseUrl: (env.OPENAI_BASE_URL || 'https://api.openai.com/v1').replace(/\/+$/, ''),
    apiKey: env.OPENAI_API_KEY || undefined,
    model: env.OPENAI_MODEL || 'gpt-4o-mini',
  }
}

/** A failure worth showing to the user as the task's status; it never contains the key. */
export class LlmError extends Error {
  override name = 'LlmError'
}

/**
 * Streams the completion's text, calling `onToken` for each piece as it arrives. Rejects with an LlmError
 * that says what went wrong, or with the abort reason when `signal` fires.
 */
export async function streamChat(
  config: LlmConfig & { apiKey: string },
  messages: ChatMessage[],
  signal: AbortSignal,
  onToken: (token: string) => void,
): Promise<void> {
  const url = `${config.baseUrl}/chat/completions`
  let response: Response
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${config.apiKey}` },
      body: JSON.stringify({ model: config.model, messages, stream: true }),
      signal,
    })
  } catch (error) {
    if (signal.aborted) throw error
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    throw new LlmError(`Cannot reach the model endpoint ${config.baseUrl} (${cause?.code ?? cause?.message ?? (error as Error).message})`)
  }
  if (!response.ok || !response.body) {
    const hint = response.status === 401 || response.status === 403 ? ': check OPENAI_API_KEY' : ''
    throw new LlmError(`The model endpoint ${config.baseUrl} answered HTTP ${response.status}${hint}`)
  }

  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true })
    for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n')) {
      const line = buffer.slice(0, newline).trim()
      buffer = buffer.slice(newline + 1)
      if (!line.startsWith('data:')) continue
      const data = line.slice(5).trim()
      if (data === '[DONE]') return
      const token = parseToken(data)
      if (token) onToken(token)
    }
  }
}

function parseToken(data: string): string | undefined {
  try {
    const event = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> }
    return event.choices?.[0]?.delta?.content ?? undefined
  } catch {
    throw new LlmError('The model endpoint sent an event that is not JSON')
  }
}
