import type { IncomingMessage } from 'node:http'
import type { PushDelivery } from './wire.js'

/** A delivery larger than this is refused (413): the agent's notifications are task snapshots, not uploads. */
const MAX_DELIVERY_BYTES = 256 * 1024
/** What all kept deliveries may take together; the oldest go first. */
const MAX_KEPT_BYTES = 2 * 1024 * 1024
/** Headers worth showing: what a receiver checks and the trace a delivery joins (`traceparent`), not the transport's. */
const SHOWN_HEADERS = /^(?:content-type|user-agent|authorization|traceparent|tracestate|x-a2a-[\w-]+|a2a-[\w-]+)$/i

/**
 * The receiver behind `/__a2a/push`: a loopback webhook the inspector hands to the agent as a task's push
 * config, keeping what arrives for the page to show. Bounded in bytes: each delivery and all of them together.
 */
export class PushReceiver {
  readonly #kept: Array<{ delivery: PushDelivery; bytes: number }> = []
  #keptBytes = 0
  #nextId = 1

  get deliveries(): PushDelivery[] {
    return this.#kept.map((entry) => entry.delivery)
  }

  /** Reads and keeps one delivery; `undefined` (and the request drained no further) when it is too large. */
  async receive(req: IncomingMessage, path: string): Promise<PushDelivery | undefined> {
    const body = await readBounded(req, MAX_DELIVERY_BYTES)
    if (body === undefined) return undefined
    const text = body.toString('utf8')
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // kept as text: the page shows what arrived, even when it is not JSON
    }
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(req.headers)) {
      if (SHOWN_HEADERS.test(name) && value !== undefined)
        headers[name] = Array.isArray(value) ? value.join(', ') : value
    }
    const delivery: PushDelivery = {
      id: this.#nextId++,
      at: new Date().toISOString(),
      path,
      headers,
      body: parsed,
      bytes: body.length,
    }
    const taskId = taskIdIn(parsed)
    if (taskId !== undefined) delivery.taskId = taskId
    // Counted as the page will receive it: the JSON of the whole delivery.
    const bytes = Buffer.byteLength(JSON.stringify(delivery))
    this.#kept.push({ delivery, bytes })
    this.#keptBytes += bytes
    while (this.#keptBytes > MAX_KEPT_BYTES && this.#kept.length > 1) this.#keptBytes -= this.#kept.shift()!.bytes
    return delivery
  }

  /** Forgets the deliveries `forget` picks (all of them without it). */
  clear(forget: (delivery: PushDelivery) => boolean = () => true): void {
    for (let i = this.#kept.length - 1; i >= 0; i--) {
      if (!forget(this.#kept[i]!.delivery)) continue
      this.#keptBytes -= this.#kept[i]!.bytes
      this.#kept.splice(i, 1)
    }
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The task a delivery is about, so the inspector shows it only to the task's owner: a v0.3 or platform webhook gets
 * the Task (`id`), a v1.0 one a StreamResponse (`task.id`, `statusUpdate.taskId`, `artifactUpdate.taskId`).
 */
function taskIdIn(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined
  const inner = [body.task, body.statusUpdate, body.artifactUpdate].find(isRecord)
  const id = inner ? (inner.taskId ?? inner.id) : body.kind === 'task' || 'status' in body ? body.id : undefined
  return typeof id === 'string' ? id : undefined
}

/** The request body, or `undefined` once it passes `limit` bytes (the rest is not read). */
async function readBounded(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'])
  if (declared > limit) return undefined
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) return undefined
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}
