import { type Answer, noAnswer, readBody, readEvents, type StreamAnswer } from './_wire.js'

/**
 * What the two HTTP bindings (JSON-RPC, HTTP+JSON) share in reading an agent's answer: a request sent, a body read
 * as JSON, a stream's events; each then reads what it got its own way (a JSON-RPC envelope, a google.rpc.Status).
 */

/** The response to `send()`, or the answer saying why none came (no connection, the time limit, a bad request). */
export async function responseOf(
  send: () => Promise<Response>,
  timeoutMs: number,
): Promise<{ response: Response } | { answer: Answer }> {
  try {
    return { response: await send() }
  } catch (error) {
    return { answer: { problem: noAnswer(error, timeoutMs), envelopeProblems: [] } }
  }
}

/**
 * An answer's body parsed as JSON (an empty body as `{}` when `emptyIsObject`), with its Content-Type; or the answer
 * itself when the agent refused the credentials (HTTP 401, 403) or the body could not be read or is not JSON.
 */
export async function readJsonBody(
  response: Response,
  timeoutMs: number,
  emptyIsObject = false,
): Promise<{ body: unknown; contentType: string } | { answer: Answer }> {
  const contentType = response.headers.get('content-type') ?? ''
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel()
    return { answer: { refused: response.status, contentType, envelopeProblems: [] } }
  }
  const read = await readBody(response, timeoutMs)
  if ('problem' in read) return { answer: { problem: read.problem, contentType, envelopeProblems: [] } }
  try {
    return { body: read.text === '' && emptyIsObject ? {} : JSON.parse(read.text), contentType }
  } catch {
    return {
      answer: {
        problem: `HTTP ${response.status} ${contentType || 'without a content type'}, not JSON`,
        contentType,
        envelopeProblems: [],
      },
    }
  }
}

/**
 * A stream's events read to its end, for the binding to add to `answer` (its events, error or eventProblem); none,
 * with `answer` saying so, when the stream was cut or an event could not be read.
 */
export async function readStream(
  response: Response,
  contentType: string,
  timeoutMs: number,
): Promise<{ answer: StreamAnswer; events: unknown[] }> {
  const parsed = await readEvents(response, timeoutMs)
  if ('failure' in parsed)
    return {
      answer: { problem: `the stream did not end: ${parsed.failure}`, contentType, envelopeProblems: [] },
      events: [],
    }
  if (parsed.problem)
    return { answer: { contentType, envelopeProblems: [], events: [], eventProblem: parsed.problem }, events: [] }
  return { answer: { contentType, envelopeProblems: [], events: [] }, events: parsed.events }
}
