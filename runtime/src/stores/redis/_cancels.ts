import type { Task } from '../../types.js'
import { type CancelReply, type CancelRequest, ForwardedCancels, type HeldCheck } from '../_cancel-forwarding.js'
import type { RedisConnection } from './_connection.js'
import type { RedisKeys } from './_keys.js'

/**
 * Cancels forwarded over Redis pub/sub: any instance publishes the request on one channel, which every instance
 * hears, and the instance running the task answers on the asker's own channel.
 *
 * Redis delivers a published message at most once, to the connections subscribed at that moment: an instance
 * whose listening connection is still connecting (it has just started) or reconnecting misses it, and so does an
 * asker its answer: hence the asking again and answering again of `ForwardedCancels`.
 */
export class CancelForwarding extends ForwardedCancels {
  readonly #connection: RedisConnection
  readonly #keys: RedisKeys

  /** `read` reads a task from the store, for a task that ends on its own before its instance sees the request. */
  constructor(
    connection: RedisConnection,
    keys: RedisKeys,
    instanceId: string,
    timeoutMs: number,
    read: (taskId: string) => Promise<Task | undefined>,
  ) {
    super(instanceId, timeoutMs, read)
    this.#connection = connection
    this.#keys = keys
    connection.listen(keys.cancel, (message) => this.requested(JSON.parse(message) as CancelRequest))
    connection.listen(keys.reply(instanceId), (message) => this.answered(JSON.parse(message) as CancelReply))
  }

  protected override async ask(request: CancelRequest): Promise<HeldCheck> {
    const message = JSON.stringify(request)
    await this.#connection.run((redis) => redis.publish(this.#keys.cancel, message))
    const lease = this.#keys.lease(request.taskId)
    return async () => (await this.#connection.run((redis) => redis.exists(lease))) > 0
  }

  protected override async answer(request: CancelRequest, reply: CancelReply): Promise<void> {
    await this.#connection.client.publish(this.#keys.reply(request.replyTo), JSON.stringify(reply))
  }
}
