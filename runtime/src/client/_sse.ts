/**
 * Server-Sent Events read incrementally from a byte stream (the WHATWG event-stream format): lines split at CR, LF
 * or CRLF on the bytes (UTF-8 never has those bytes inside a character), `data` lines joined, `id` kept as the last
 * event id, comments and `retry` skipped. Memory is bounded: a line, or an event's data, longer than `maxBytes` ends
 * the read with `SseTooLarge` instead of being held.
 */

export interface SseEvent {
  data: string
  /** The `event` field, when the event has one. */
  event?: string
  /** The last event id (the stream's, as the format carries it forward), when there is one. */
  id?: string
}

export class SseTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`an event-stream line or event is larger than ${maxBytes} bytes`)
  }
}

const LF = 0x0a
const CR = 0x0d

export async function* readSse(body: ReadableStream<Uint8Array>, maxBytes: number): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder()
  let line: Uint8Array[] = []
  let lineBytes = 0
  let afterCr = false
  let data: string[] = []
  let dataBytes = 0
  let eventType: string | undefined
  let lastId: string | undefined

  /** One complete line's field applied; an event when the line is blank. */
  const takeLine = (): SseEvent | undefined => {
    const text = decoder.decode(join(line, lineBytes))
    const bytes = lineBytes
    line = []
    lineBytes = 0
    if (text === '') {
      const event = data.length ? { data: data.join('\n'), ...(eventType && { event: eventType }) } : undefined
      data = []
      dataBytes = 0
      eventType = undefined
      return event && (lastId ? { ...event, id: lastId } : event)
    }
    if (text.startsWith(':')) return undefined
    const colon = text.indexOf(':')
    const field = colon < 0 ? text : text.slice(0, colon)
    let value = colon < 0 ? '' : text.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') {
      dataBytes += bytes
      if (dataBytes > maxBytes) throw new SseTooLarge(maxBytes)
      data.push(value)
    } else if (field === 'event') eventType = value
    else if (field === 'id' && !value.includes('\0')) lastId = value
    return undefined
  }

  const reader = body.getReader()
  try {
    for (;;) {
      const { done, value: chunk } = await reader.read()
      if (done) return
      let start = 0
      for (let at = 0; at < chunk.length; at++) {
        const byte = chunk[at]
        if (byte !== LF && byte !== CR) continue
        // The LF of a CRLF whose CR ended the previous line.
        if (byte === LF && afterCr && at === start && lineBytes === 0) {
          afterCr = false
          start = at + 1
          continue
        }
        afterCr = byte === CR
        append(chunk.subarray(start, at))
        start = at + 1
        const event = takeLine()
        if (event) yield event
      }
      if (start < chunk.length) {
        afterCr = false
        append(chunk.subarray(start))
      }
    }
  } finally {
    reader.releaseLock()
  }

  function append(bytes: Uint8Array) {
    if (!bytes.length) return
    lineBytes += bytes.length
    if (lineBytes > maxBytes) throw new SseTooLarge(maxBytes)
    line.push(bytes)
  }
}

function join(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0]!
  const joined = new Uint8Array(total)
  let at = 0
  for (const part of parts) {
    joined.set(part, at)
    at += part.length
  }
  return joined
}
