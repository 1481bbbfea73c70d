import { closeSync, openSync, readSync, statSync } from 'node:fs'
import type { Finding } from './_card-check.js'

/**
 * Reads a card from a file or a response as at most CARD_BYTES_LIMIT bytes, into either the parsed JSON or
 * the one finding that says why there is nothing to check (empty, a folder, too large, not JSON).
 */
const CARD_BYTES_LIMIT = 1024 * 1024

export type CardText = { card: unknown } | { finding: Finding }

const problem = (message: string, hint: string): { finding: Finding } => ({
  finding: { level: 'error', path: '$', message, hint },
})

const tooLarge = (bytes: string, what: string) =>
  problem(
    `${what} is ${bytes}, over the ${CARD_BYTES_LIMIT / 1024 / 1024} MiB this check reads`,
    'clients fetch the card to choose an agent: keep skills and descriptions short, link long documentation',
  )

const STDIN = '/dev/stdin'

/** `what` names the document in the findings: a key set (`a2a card validate --jwks`) is read the same way. */
export function readCardFile(path: string, what = 'the card'): CardText {
  const stat = statSync(path)
  if (stat.isDirectory())
    return problem(
      `${path} is a folder, not a card file`,
      "pass the JSON file of the card, or no argument for the project's card",
    )
  // A pipe or FIFO (`/dev/stdin`, `<(…)`) has no size to go by: only a regular file is refused by its size.
  if (stat.isFile() && stat.size > CARD_BYTES_LIMIT) return tooLarge(`${stat.size} bytes`, what)
  // The command's own stdin is read as it is: opening /dev/stdin anew fails when it is a socket (ENXIO).
  const fd = path === STDIN ? 0 : openSync(path, 'r')
  let text: Buffer
  try {
    text = readUpTo(fd, CARD_BYTES_LIMIT + 1)
  } finally {
    if (fd !== 0) closeSync(fd)
  }
  if (text.length > CARD_BYTES_LIMIT) return tooLarge(`more than ${CARD_BYTES_LIMIT} bytes`, what)
  return parseCard(text.toString('utf8'), what)
}

/**
 * Reads from the current position until the end or `limit` bytes, whichever comes first: a file growing
 * meanwhile, or an endless pipe, is still read within the limit. No explicit position, which a pipe refuses.
 */
function readUpTo(fd: number, limit: number): Buffer {
  const chunks: Buffer[] = []
  let total = 0
  const buffer = Buffer.alloc(64 * 1024)
  while (total < limit) {
    let length: number
    try {
      length = readSync(fd, buffer, 0, Math.min(buffer.length, limit - total), null)
    } catch (error) {
      // A pipe shared with a non-blocking reader: wait for the writer rather than fail.
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10)
      continue
    }
    if (length === 0) break
    chunks.push(Buffer.from(buffer.subarray(0, length)))
    total += length
  }
  return Buffer.concat(chunks)
}

/** The body of a response, cut off past the limit so a huge or endless card cannot exhaust the memory. */
export async function readCardResponse(response: Response, what = 'the card'): Promise<CardText> {
  const declared = Number(response.headers.get('content-length'))
  if (declared > CARD_BYTES_LIMIT) {
    await response.body?.cancel()
    return tooLarge(`${declared} bytes`, what)
  }
  const chunks: Uint8Array[] = []
  let received = 0
  for await (const chunk of (response.body ?? []) as AsyncIterable<Uint8Array>) {
    received += chunk.byteLength
    if (received > CARD_BYTES_LIMIT) {
      await response.body?.cancel().catch(() => {})
      return tooLarge(`more than ${CARD_BYTES_LIMIT} bytes`, what)
    }
    chunks.push(chunk)
  }
  return parseCard(Buffer.concat(chunks).toString('utf8'), what)
}

function parseCard(raw: string, what: string): CardText {
  const text = raw.replace(/^\uFEFF/, '')
  if (!text.trim())
    return problem(`${what} is empty`, 'write the card as a JSON object: { "name": ..., "description": ..., ... }')
  try {
    return { card: JSON.parse(text) }
  } catch (error) {
    const { line, column } = whereJsonBroke(text, (error as Error).message)
    const reason = (error as Error).message
      .replace(/ in JSON at position \d+.*$/, '')
      .replace(/ \(line \d+ column \d+\)$/, '')
    return problem(`not valid JSON at line ${line}, column ${column}: ${reason}`, 'fix the JSON syntax there')
  }
}

/** Line and column (from 1) of a JSON.parse error: V8 names a position, or nothing at the end of the input. */
function whereJsonBroke(text: string, message: string): { line: number; column: number } {
  const at = /line (\d+) column (\d+)/.exec(message)
  if (at) return { line: Number(at[1]), column: Number(at[2]) }
  const position = /at position (\d+)/.exec(message)
  const offset = position ? Number(position[1]) : text.length
  const before = text.slice(0, offset).split('\n')
  return { line: before.length, column: before.at(-1)!.length + 1 }
}
