import { expect } from 'vitest'

/** Reads a whole SSE body and checks its framing: nothing but `data: <json>\n\n` events. */
export async function readEvents(response: Response): Promise<{ raw: string; events: any[] }> {
  const raw = await response.text()
  expect(raw).toMatch(/^(data: [^\n]+\n\n)+$/)
  const events = raw
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => JSON.parse(frame.slice('data: '.length)))
  return { raw, events }
}

/** Reads SSE events one at a time from a live body. */
export function eventReader(response: Response) {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  return {
    async next(): Promise<any | undefined> {
      for (;;) {
        const end = buffer.indexOf('\n\n')
        if (end !== -1) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          return JSON.parse(frame.slice('data: '.length))
        }
        const { done, value } = await reader.read()
        if (done) return undefined
        buffer += decoder.decode(value, { stream: true })
      }
    },
    cancel: () => reader.cancel(),
  }
}
