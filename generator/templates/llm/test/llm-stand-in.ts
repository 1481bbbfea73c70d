import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A stand-in for an OpenAI-compatible chat-completions endpoint on 127.0.0.1, so tests never call the
 * internet. It streams "You said: <last user message>" word by word, and checks the bearer key.
 */
export interface StandInLlm {
  /** Base URL to put in OPENAI_BASE_URL. */
  url: string
  apiKey: string
  /** Milliseconds between tokens (raise it to test cancel). */
  delayMs: number
  /** Requests whose client went away before the answer ended. */
  abandoned: number
  close(): Promise<void>
}

export async function startStandInLlm(apiKey = 'stand-in-key'): Promise<StandInLlm> {
  const state = { delayMs: 1, abandoned: 0 }
  const server: Server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return void res.writeHead(404).end()
    if (req.headers.authorization !== `Bearer ${apiKey}`)
      return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"bad key"}}')
    let body = ''
    for await (const chunk of req) body += chunk
    const { messages } = JSON.parse(body) as {
      messages: Array<{ role: string; content: string | Array<{ type: string; text?: string }> }>
    }
    const content = messages.filter((message) => message.role === 'user').at(-1)?.content ?? ''
    // A message's content is a string, or parts (text among them) when it carries more than text.
    const lastUser = typeof content === 'string' ? content : content.map((part) => part.text ?? '').join('')
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    let open = true
    res.on('close', () => {
      if (!res.writableFinished) state.abandoned++
      open = false
    })
    const words = `You said: ${lastUser}`.split(' ')
    for (const [i, word] of words.entries()) {
      if (!open) return
      await new Promise((resolve) => setTimeout(resolve, state.delayMs))
      // The first chunk names the role, as OpenAI's does (LangChain reads the message's kind from it).
      const delta = i === 0 ? { role: 'assistant', content: word } : { content: ` ${word}` }
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta }] })}\n\n`)
    }
    // The last chunk says why the answer ended, as every OpenAI-compatible server does.
    res.end(
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`,
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    apiKey,
    get delayMs() {
      return state.delayMs
    },
    set delayMs(value) {
      state.delayMs = value
    },
    get abandoned() {
      return state.abandoned
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
