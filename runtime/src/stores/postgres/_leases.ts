import type { PgPool } from './_pg.js'

/**
 * How `leaseMs` (the longest a task whose instance died waits before another instance fails it) is spent: a lease
 * lasts 3/4 of it past each renewal, renewals come every quarter (three chances before it runs out), and the
 * lost-task check runs every fifth. A task is failed at most 3/4 + 1/5 of `leaseMs` after its instance died, the
 * rest a margin for the check's own statements and a busy machine.
 */
export function leaseTimings(leaseMs: number): { holdMs: number; renewEveryMs: number; lostCheckEveryMs: number } {
  return {
    holdMs: Math.max(1, Math.floor((leaseMs * 3) / 4)),
    renewEveryMs: Math.max(50, Math.floor(leaseMs / 4)),
    lostCheckEveryMs: Math.max(50, Math.floor(leaseMs / 5)),
  }
}

/**
 * This instance's holds on the tasks it runs: a lease per task in its row (holder and expiry, by the database's
 * clock, never an instance's), held for `holdMs` past each renewal, all renewed in one statement (see
 * `leaseTimings`). A task whose lease could not be renewed is taken for lost: another instance may fail it (see the
 * store's lost-task check), so this one stops running it (`onLost`).
 */
export class Leases {
  /**
   * Tasks held, with when their lease was last taken or renewed by this instance's clock (`performance.now()`);
   * `false` for one claimed before it was created (no row yet to hold it: `create` takes it).
   */
  readonly #held = new Map<string, number | false>()
  readonly #pool: PgPool
  readonly #s: string
  readonly #instanceId: string
  /** How long a lease lasts past each renewal (3/4 of the store's `leaseMs`). */
  readonly holdMs: number
  #onLost: ((taskId: string) => void) | undefined
  #renewing = false

  constructor(pool: PgPool, s: string, instanceId: string, holdMs: number) {
    this.#pool = pool
    this.#s = s
    this.#instanceId = instanceId
    this.holdMs = holdMs
  }

  holds(taskId: string): boolean {
    return this.#held.has(taskId)
  }

  /** The lease was taken with the task (`a2a_create` takes it in the same statement). */
  took(taskId: string): void {
    this.#held.set(taskId, performance.now())
  }

  /** The lease was given back by the event that ended the task: no renewal may take it for lost. */
  gaveBack(taskId: string): void {
    this.#held.delete(taskId)
  }

  onLost(handler: (taskId: string) => void): void {
    this.#onLost = handler
  }

  /** Free, run out, or already this instance's: taken. A task not created yet is this instance's to create. */
  async claim(taskId: string): Promise<boolean> {
    const [row] = await this.#pool.query<{ taken: boolean; known: boolean }>(
      {
        name: `a2a-claim-${this.#s}`,
        text: `WITH taken AS (
  UPDATE ${this.#s}.a2a_tasks SET lease_holder = $2, lease_until = now() + $3 * interval '1 millisecond'
  WHERE id = $1 AND (lease_holder IS NULL OR lease_holder = $2 OR lease_until < now()) RETURNING 1)
SELECT EXISTS (SELECT 1 FROM taken) AS taken, EXISTS (SELECT 1 FROM ${this.#s}.a2a_tasks WHERE id = $1) AS known`,
      },
      [taskId, this.#instanceId, this.holdMs],
    )
    const { taken, known } = row!
    if (taken) this.#held.set(taskId, performance.now())
    else if (!known) this.#held.set(taskId, false)
    return taken || !known
  }

  async release(taskId: string): Promise<void> {
    // Not held: never taken, or given back by the event that ended the task.
    const held = this.#held.get(taskId)
    if (!this.#held.delete(taskId) || held === false) return
    await this.#pool
      .query(
        {
          name: `a2a-release-${this.#s}`,
          text: `UPDATE ${this.#s}.a2a_tasks SET lease_holder = NULL, lease_until = NULL WHERE id = $1 AND lease_holder = $2`,
        },
        [taskId, this.#instanceId],
      )
      .catch(() => {})
  }

  async releaseAll(): Promise<void> {
    const held = [...this.#held].flatMap(([taskId, row]) => (row === false ? [] : [taskId]))
    this.#held.clear()
    if (!held.length) return
    await this.#pool
      .queryNow(
        {
          text: `UPDATE ${this.#s}.a2a_tasks SET lease_holder = NULL, lease_until = NULL WHERE id = ANY($1) AND lease_holder = $2`,
        },
        [held, this.#instanceId],
      )
      .catch(() => {})
  }

  /**
   * Renews every lease held, in one statement; a lease that ran out or another instance took is lost. So is one this
   * instance could not renew for as long as a lease lasts (the database unreachable from here): by then another
   * instance may have failed the task.
   */
  async renew(): Promise<void> {
    const held = [...this.#held].flatMap(([taskId, row]) => (row === false ? [] : [taskId]))
    if (this.#renewing || held.length === 0 || this.#pool.closed) return
    this.#renewing = true
    const asked = performance.now()
    let kept: Set<string>
    let reached = true
    try {
      const renewed = await this.#pool.query<{ id: string }>(
        {
          name: `a2a-renew-${this.#s}`,
          text: `UPDATE ${this.#s}.a2a_tasks SET lease_until = now() + $3 * interval '1 millisecond'
WHERE id = ANY($1) AND lease_holder = $2 AND lease_until >= now() RETURNING id`,
        },
        [held, this.#instanceId, this.holdMs],
      )
      kept = new Set(renewed.map((row) => row.id))
    } catch {
      // Unreachable now: tried again at the next renewal, while the leases last.
      reached = false
      kept = new Set(held.filter((taskId) => asked - (this.#held.get(taskId) || 0) < this.holdMs))
    } finally {
      this.#renewing = false
    }
    // A lease that could not be renewed has run out (this instance stalled past it, or could not reach the
    // database for as long as a lease lasts): another instance may have failed the task already. Stop running it here.
    for (const taskId of held) {
      const since = this.#held.get(taskId)
      // Given back, or taken again since the renewal was asked: not this renewal's to judge.
      if (since === undefined || since === false || since >= asked) continue
      if (kept.has(taskId)) {
        if (reached) this.#held.set(taskId, asked)
        continue
      }
      this.#held.delete(taskId)
      this.#onLost?.(taskId)
    }
  }
}
