import { A2AError, ErrorCode, InvalidRequestError, ParseError } from '../errors.js'
import type { BodyBudget, BodyReservation } from './_body-budget.js'
import { headerOf, nodeHeadersOf } from './_node-headers.js'

export const DEFAULT_MAX_BODY_SIZE = 1024 * 1024

const decoder = new TextDecoder()

/**
 * Most bytes of a refused body read, and dropped, before its refusal goes out, on a server other than Node's. Most
 * clients send their whole body before they read the answer, and Bun's server resets a connection whose body is
 * left unread: the client, still sending, got a failed write (EPIPE) and never saw the 413; under `wrangler dev`,
 * a chunked body cut off in the Durable Object reset the connection too. Past this many bytes the refusal goes out
 * at once. Node's server answers at once and closes the connection: a client reading while it sends gets the 413.
 */
const DRAINED_BYTES_MAX = 64 * 1024 * 1024

function tooLarge(limit: number): A2AError {
  return new A2AError(ErrorCode.InvalidRequest, `Invalid Request: the body exceeds the limit of ${limit} bytes`, 413)
}

/** The refusal of a body whose declared length (Content-Length) is over `limit`, before any of it is read. */
export function declaredTooLarge(request: Request, limit: number): A2AError | undefined {
  const declared = headerOf(request, 'content-length')
  return declared !== null && Number(declared) > limit ? tooLarge(limit) : undefined
}

/**
 * Whether a request's `Content-Type` is JSON (`application/json`, `application/*+json`, with parameters). A body
 * with none is refused too: a browser page may send a typeless (or `text/plain`) body to any site without asking
 * first (no CORS preflight), so only a JSON type proves the sender was allowed to send it.
 */
export function isJsonContentType(type: string | null): boolean {
  if (type === 'application/json') return true
  if (type === null) return false
  const mediaType = mediaTypeOf(type)
  return mediaType === 'application/json' || (mediaType.startsWith('application/') && mediaType.endsWith('+json'))
}

const mediaTypeOf = (type: string): string => type.split(';', 1)[0]!.trim().toLowerCase()

/**
 * The refusal of a body that is not typed as JSON: HTTP 415 with A2A v1.0's ContentTypeNotSupported (-32005) for
 * a v1.0 request, and Invalid Request (-32600) in the dialects that have no such code.
 */
export function unsupportedContentType(type: string | null, v1: boolean): A2AError {
  const message = `Content-Type must be application/json (got ${type === null ? 'none' : JSON.stringify(mediaTypeOf(type).slice(0, 100))})`
  return v1 ? new A2AError(ErrorCode.ContentTypeNotSupported, message, 415) : new InvalidRequestError(message, 415)
}

/**
 * Reads and parses the JSON body, refusing more than `limit` bytes: a declared length over the limit is
 * refused before reading, and a chunked body is counted as it arrives, so no more than the limit is buffered.
 * With a `budget`, the body holds its declared length of it (or, chunked, what has arrived) until it is read or
 * abandoned; one that does not fit is refused (503) before anything more of it is read.
 */
export async function readJsonBody(request: Request, limit: number, budget?: BodyBudget): Promise<unknown> {
  const node = nodeHeadersOf(request)
  const declared = headerOf(request, 'content-length')
  const declaredBytes = declared === null ? 0 : Number(declared)
  if (declaredBytes > limit) {
    if (!node && request.body && declaredBytes <= DRAINED_BYTES_MAX) await drain(request.body.getReader(), 0)
    throw tooLarge(limit)
  }
  let text: string
  // Node's HTTP parser never delivers more than the declared length (and refuses a malformed one), so its requests
  // take the fast buffered read, holding their declared length of the budget without a reservation to count them;
  // a Request from elsewhere (app.fetch) may understate its length, so it is counted as it arrives.
  if (node && declared !== null) {
    if (budget && !budget.take(declaredBytes, declaredBytes)) throw budget.refusal()
    try {
      text = withoutBom(await request.text())
    } finally {
      budget?.give(declaredBytes)
    }
  } else {
    const reservation = budget?.reserve(declaredBytes)
    if (budget && !reservation) throw budget.refusal()
    try {
      text = await readCounted(request, limit, reservation, !node)
    } finally {
      reservation?.release()
    }
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new ParseError()
  }
}

/**
 * Node's buffered read keeps a leading UTF-8 byte order mark, which the TextDecoder of the other reads drops
 * (as JSON parsers may, RFC 8259 §8.1): dropped here too, so a body means the same however it arrives.
 */
const withoutBom = (text: string): string => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)

/** `drains`: a body over the limit is read to its end (see DRAINED_BYTES_MAX) before it is refused. */
async function readCounted(
  request: Request,
  limit: number,
  reservation: BodyReservation | undefined,
  drains: boolean,
): Promise<string> {
  if (!request.body) return ''
  const reader = request.body.getReader()
  let chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      // What was read is dropped: the budget no longer holds it while the rest is drained.
      chunks = []
      reservation?.release()
      if (drains) await drain(reader, size)
      else await reader.cancel().catch(() => {})
      throw tooLarge(limit)
    }
    if (reservation && !reservation.cover(size)) {
      await reader.cancel().catch(() => {})
      throw reservation.refusal()
    }
    chunks.push(value)
  }
  if (chunks.length === 1) return decoder.decode(chunks[0])
  const all = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    all.set(chunk, offset)
    offset += chunk.byteLength
  }
  return decoder.decode(all)
}

/** Reads and drops the rest of a refused body, `read` bytes of it already read, up to DRAINED_BYTES_MAX in all. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, read: number): Promise<void> {
  try {
    while (read <= DRAINED_BYTES_MAX) {
      const { done, value } = await reader.read()
      if (done) return
      read += value.byteLength
    }
    await reader.cancel()
  } catch {
    // The client went away: nothing is left to read.
  }
}
