import type { RedisConnection } from './_connection.js'
import type { RedisKeys } from './_keys.js'
import { runScript } from './_scripts.js'

/**
 * This instance's holds on the tasks it runs: a lease per task in Redis, renewed every third of `leaseMs`. A
 * task whose lease runs out is taken for lost: another instance may fail it (see the store's lost-task check),
 * so this one stops running it (`onLost`).
 */
export class Leases {
  readonly #held = new Set<string>()
  readonly #connection: RedisConnection
  readonly #keys: RedisKeys
  readonly #instanceId: string
  readonly #leaseMs: number
  readonly #ttlMs: number
  #onLost: ((taskId: string) => void) | undefined

  constructor(connection: RedisConnection, keys: RedisKeys, instanceId: string, leaseMs: number, ttlMs: number) {
    this.#connection = connection
    this.#keys = keys
    this.#instanceId = instanceId
    this.#leaseMs = leaseMs
    this.#ttlMs = ttlMs
  }

  holds(taskId: string): boolean {
    return this.#held.has(taskId)
  }

  /** The lease was taken with the task (CREATE takes it in the same script). */
  took(taskId: string): void {
    this.#held.add(taskId)
  }

  /** The lease was given back in Redis (by the event that ended the task): no renewal may take it for lost. */
  gaveBack(taskId: string): void {
    this.#held.delete(taskId)
  }

  onLost(handler: (taskId: string) => void): void {
    this.#onLost = handler
  }

  async claim(taskId: string): Promise<boolean> {
    const taken = await this.#connection.run((redis) =>
      redis.set(this.#keys.lease(taskId), this.#instanceId, 'PX', this.#leaseMs, 'NX'),
    )
    if (taken === 'OK') this.#held.add(taskId)
    return taken === 'OK'
  }

  async release(taskId: string): Promise<void> {
    // Not held: never taken, or given back by the event that ended the task.
    if (!this.#held.delete(taskId)) return
    await this.#connection
      .run((redis) => runScript(redis, 'a2aRelease', 1, this.#keys.lease(taskId), this.#instanceId))
      .catch(() => {})
  }

  async releaseAll(): Promise<void> {
    await Promise.allSettled([...this.#held].map((taskId) => this.release(taskId)))
  }

  async renew(): Promise<void> {
    if (!this.#connection.ready || this.#held.size === 0) return
    const held = [...this.#held]
    const redis = this.#connection.client
    // Sent together, each on the node of its task (a pipeline must stay on one node of a cluster).
    const renewed = await Promise.all(
      held.map((taskId) =>
        runScript(
          redis,
          'a2aRenewTask',
          2,
          this.#keys.lease(taskId),
          this.#keys.task(taskId),
          this.#instanceId,
          this.#leaseMs,
          this.#ttlMs,
        ).catch(() => undefined),
      ),
    )
    // A lease that could not be renewed has run out (this instance stalled past it): another instance may
    // have failed the task already. Stop running it here.
    for (const [at, result] of renewed.entries()) {
      const taskId = held[at]!
      if (result !== 0 || !this.#held.has(taskId)) continue
      this.#held.delete(taskId)
      this.#onLost?.(taskId)
    }
  }
}
