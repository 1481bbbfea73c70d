import type { Task } from '../../types.js'
import { type CancelReply, type CancelRequest, ForwardedCancels, type HeldCheck } from '../_cancel-forwarding.js'
import { instanceChannel } from './_listener.js'
import type { PgPool } from './_pg.js'

/** The largest notification sent (PostgreSQL's limit is 8000 bytes). */
const MAX_PAYLOAD_BYTES = 7000

/**
 * Cancels forwarded by NOTIFY: the asker NOTIFYs the channel of the instance that holds the task's lease (read from
 * its row in the same statement), which cancels it and answers on the asker's own channel.
 *
 * A NOTIFY reaches only the connections listening when it commits: an instance whose listening connection is still
 * connecting (it has just started) or reconnecting misses it, and so does an asker its answer: hence the asking
 * again and answering again of `ForwardedCancels`.
 */
export class CancelForwarding extends ForwardedCancels {
  readonly #pool: PgPool
  readonly #s: string
  readonly #afterWrites: (taskId: string) => Promise<void>

  /**
   * `read` reads a task from the store, for a task that ends on its own before its instance sees the request;
   * `afterWrites` waits (within the store's timeout) for the writes of a task this instance handed so far.
   */
  constructor(
    pool: PgPool,
    s: string,
    instanceId: string,
    timeoutMs: number,
    read: (taskId: string) => Promise<Task | undefined>,
    afterWrites: (taskId: string) => Promise<void>,
  ) {
    super(instanceId, timeoutMs, read)
    this.#pool = pool
    this.#s = s
    this.#afterWrites = afterWrites
  }

  /** A notification on this instance's channel: a request to serve, or the answer to one of its own. */
  heard(payload: string): void {
    const message = JSON.parse(payload) as CancelRequest | CancelReply
    if ('replyTo' in message) this.requested(message)
    else this.answered(message)
  }

  /** To the holder of a live lease, found and notified in one statement, which says whether there is one. */
  protected override async ask(request: CancelRequest): Promise<HeldCheck> {
    const [row] = await this.#pool.query<{ held: boolean }>(
      {
        name: `a2a-cancel-${this.#s}`,
        text: `SELECT count(pg_notify('${instanceChannel('')}' || lease_holder, $2)) > 0 AS held
FROM ${this.#s}.a2a_tasks WHERE id = $1 AND lease_holder IS NOT NULL AND lease_until > now()`,
      },
      [request.taskId, JSON.stringify(request)],
    )
    const held = row?.held === true
    return async () => held
  }

  protected override async answer(request: CancelRequest, reply: CancelReply): Promise<void> {
    let payload = JSON.stringify(reply)
    // PostgreSQL refuses a payload of 8000 bytes or more: a large task is read by the asker instead, once the
    // cancel's status is in the table (it waits behind the task's earlier writes, a stream's chunks).
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES && reply.task) {
      payload = JSON.stringify({ requestId: reply.requestId, read: true } satisfies CancelReply)
      // Not landed in time: the asker reads the table until it holds the cancel's status, or gives up.
      await this.#afterWrites(request.taskId).catch(() => {})
    }
    await this.#pool.query({ text: 'SELECT pg_notify($1, $2)' }, [instanceChannel(request.replyTo), payload])
  }
}
