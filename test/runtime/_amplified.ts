import { Agent } from 'node:http'
import { rpc } from './_flood.ts'

/**
 * Messages whose JSON text is small for the heap it parses to (width amplification): about 1 MB each, the most
 * `maxBodySize` lets through, for test/runtime/amplification.test.ts and test/soak/amplification.soak.ts.
 */

/** The JSON text each shape fills, under the 1 MiB body limit with its envelope. */
const BODY_CHARS = 1_000_000

const repeated = (unit: string, chars: number) =>
  Array.from({ length: Math.floor(chars / (unit.length + 1)) }, () => unit).join(',')

/** Keys k0…k15 in an order of their own for each seed: each order is a hidden class chain of its own in V8. */
function shuffledObject(seed: number): string {
  const keys = Array.from({ length: 16 }, (_, i) => `k${i}`)
  let state = seed + 1
  for (let i = keys.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2147483648
    const j = state % (i + 1)
    ;[keys[i], keys[j]] = [keys[j]!, keys[i]!]
  }
  return `{${keys.map((key) => `"${key}":0`).join(',')}}`
}

function objectsWithKeysOfTheirOwn(chars: number): string {
  const items: string[] = []
  for (let i = 0, used = 0; used < chars; i++) {
    const item = `{"x${i}":0}`
    items.push(item)
    used += item.length + 1
  }
  return items.join(',')
}

function manyKeys(chars: number): string {
  const items: string[] = []
  for (let i = 0, used = 0; used < chars; i++) {
    const item = `"k${i}":0`
    items.push(item)
    used += item.length + 1
  }
  return `{${items.join(',')}}`
}

/** 60 levels of arrays around an empty object, near the deepest nesting a wire message may have, side by side. */
function deepButAllowed(chars: number): string {
  const one = `${'['.repeat(60)}{}${']'.repeat(60)}`
  return repeated(one, chars)
}

function shuffledObjects(chars: number): string {
  const items: string[] = []
  for (let i = 0, used = 0; used < chars; i++) {
    const item = shuffledObject(i)
    items.push(item)
    used += item.length + 1
  }
  return items.join(',')
}

/** A message/send body, as JSON text, whose `message` has `metadata` (or `parts`) of the given raw JSON. */
const withMetadata = (id: number, metadata: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"message/send","params":{"message":{"role":"user","messageId":"m-${id}","parts":[{"kind":"text","text":"hi"}],"metadata":${metadata}}}}`
const withParts = (id: number, parts: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"message/send","params":{"message":{"role":"user","messageId":"m-${id}","parts":[${parts}]}}}`

export interface AmplifiedShape {
  name: string
  /** The request body for the i-th send. */
  body(i: number): string
}

/** Each shape the attack tried, and those like it. */
export const AMPLIFIED_SHAPES: AmplifiedShape[] = (() => {
  // Built once: the texts are the same for every send of a shape but the message id.
  const emptyObjects = `{"a":[${repeated('{}', BODY_CHARS)}]}`
  const emptyArrays = `{"a":[${repeated('[]', BODY_CHARS)}]}`
  const keys = manyKeys(BODY_CHARS)
  const ownKeys = `{"a":[${objectsWithKeysOfTheirOwn(BODY_CHARS)}]}`
  const shuffled = `{"a":[${shuffledObjects(BODY_CHARS)}]}`
  const deep = `{"a":[${deepButAllowed(BODY_CHARS)}]}`
  const tinyParts = repeated('{"kind":"text","text":"a"}', BODY_CHARS)
  const tinyDataParts = repeated('{"kind":"data","data":{}}', BODY_CHARS)
  return [
    { name: 'metadata of empty objects', body: (i) => withMetadata(i, emptyObjects) },
    { name: 'metadata of empty arrays', body: (i) => withMetadata(i, emptyArrays) },
    { name: 'metadata of many keys', body: (i) => withMetadata(i, keys) },
    { name: 'metadata of objects each with a key of its own', body: (i) => withMetadata(i, ownKeys) },
    { name: 'metadata of objects of the same keys in shuffled orders', body: (i) => withMetadata(i, shuffled) },
    { name: 'metadata nested as deep as allowed, side by side', body: (i) => withMetadata(i, deep) },
    { name: 'many tiny text parts', body: (i) => withParts(i, tinyParts) },
    { name: 'many tiny data parts', body: (i) => withParts(i, tinyDataParts) },
  ]
})()

export interface AmplifiedResult {
  /** Answers by kind: `completed`, `-32602 …maxTaskBytes…`, or the unexpected ones described. */
  completed: number
  refused: number
  /** Anything else (a 5xx, another error, a dropped connection), the first 20 described. */
  problems: string[]
}

/**
 * `count` sends of `shape`, `concurrency` at a time. Each answer must be a completed task or a -32602 naming
 * maxTaskBytes: a refusal before anything is kept.
 */
export async function sendAmplified(
  port: number,
  shape: AmplifiedShape,
  count: number,
  concurrency = 4,
): Promise<AmplifiedResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  const result: AmplifiedResult = { completed: 0, refused: 0, problems: [] }
  let next = 0
  const worker = async () => {
    while (next < count) {
      const i = next++
      try {
        const { status, body } = await rpc(port, 'message/send', undefined, { agent, raw: shape.body(i) })
        if (status === 200 && body.result?.status?.state === 'completed') result.completed++
        else if (status === 200 && body.error?.code === -32602 && /maxTaskBytes/.test(body.error.message))
          result.refused++
        else if (result.problems.length < 20)
          result.problems.push(`${shape.name} #${i}: HTTP ${status} ${JSON.stringify(body).slice(0, 300)}`)
      } catch (error) {
        if (result.problems.length < 20) result.problems.push(`${shape.name} #${i}: ${(error as Error).message}`)
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  agent.destroy()
  return result
}
