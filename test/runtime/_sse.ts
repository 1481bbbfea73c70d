import { expect } from 'vitest'

/**
 * How a stream frames its events: the platform dialect's exact `data: <json>\n\n` (unless numbering is asked
 * for), or `id: <n>\ndata: <json>\n\n` (the A2A dialects, and the platform dialect with `Last-Event-ID`).
 */
export type Framing = 'data-only' | 'numbered'

const FRAMES: Record<Framing, RegExp> = {
  'data-only': /^(data: [^\n]+\n\n)+$/,
  numbered: /^(id: \d+\ndata: [^\n]+\n\n)+$/,
}

/** Reads a whole SSE body and checks its framing; `ids` are the event numbers (numbered framing only). */
export async function readEvents(
  response: Response,
  framing: Framing = 'data-only',
): Promise<{ raw: string; events: any[]; ids: number[] }> {
  const raw = await response.text()
  expect(raw).toMatch(FRAMES[framing])
  const frames = raw.split('\n\n').filter(Boolean)
  const ids = framing === 'numbered' ? frames.map((frame) => Number(/^id: (\d+)\n/.exec(frame)![1])) : []
  const events = frames.map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 'data: '.length)))
  return { raw, events, ids }
}

/**
 * Reads SSE events one at a time from a live body; `lastId` is the `id:` of the last event read, `heartbeats`
 * the keep-alive comments passed over so far (counted while `next()` waits).
 */
export function eventReader(response: Response) {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  const state = {
    lastId: undefined as number | undefined,
    heartbeats: 0,
    async next(): Promise<any | undefined> {
      for (;;) {
        const end = buffer.indexOf('\n\n')
        if (end !== -1) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          if (frame === ': keep-alive') {
            state.heartbeats++
            continue
          }
          const id = /^id: (\d+)\n/.exec(frame)
          if (id) state.lastId = Number(id[1])
          return JSON.parse(frame.slice(frame.indexOf('data: ') + 'data: '.length))
        }
        const { done, value } = await reader.read()
        if (done) return undefined
        buffer += decoder.decode(value, { stream: true })
      }
    },
    cancel: () => reader.cancel(),
  }
  return state
}
