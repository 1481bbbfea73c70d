import { isSettled } from '../core/_lifecycle.js'
import type { Logger } from '../logger.js'
import { envValue, processEnv } from '../settings.js'
import type { Task, TaskEvent } from '../types.js'
import type { TaskSnapshot } from './_log-records.js'
import { failStopped } from './_stopped.js'
import { type MemoryStoreOptions, MemoryTaskStore } from './memory.js'
import type { TaskPage, TaskQuery, TaskStore } from './task-store.js'

/**
 * The part of a Durable Object's storage (`ctx.storage`, Cloudflare Workers) the store uses. Writes need not
 * be awaited for durability: the object's output gate holds every answer until the writes before it are
 * confirmed, so a client never hears of a task that a crash would lose.
 */
export interface DurableObjectStorageLike {
  list<T = unknown>(options: { prefix: string }): Promise<Map<string, T>>
  put<T>(entries: Record<string, T>): Promise<void>
  delete(keys: string[]): Promise<number>
}

/**
 * What the Durable Object store keeps: the memory store's options, with a byte budget of 32 MiB unless
 * `maxBytes` or `A2A_STORE_MAX_BYTES` says otherwise.
 */
export interface DurableObjectStoreOptions extends MemoryStoreOptions {
  /**
   * Where start-up repairs and failed storage deletes are reported.
   * @default undefined (silent)
   */
  logger?: Pick<Logger, 'warn'>
}

/**
 * A Durable Object is given 128 MB of memory, and the store holds every task in it: its default byte budget is
 * a quarter of that (the memory store's, 128 MiB, would not fit). `A2A_STORE_MAX_BYTES` or `maxBytes` sets it.
 */
const DEFAULT_DURABLE_OBJECT_STORE_MAX_BYTES = 32 * 1024 * 1024

const PREFIX = 'task:'
/** No key starts with it: a read that answers with nothing. */
const PROBE_PREFIX = 'a2a-probe:'
/**
 * A stored value is at most 128 KiB: a task's JSON is kept in pieces of this many characters (≤ 64 KiB each as UTF-16).
 */
const PIECE_CHARS = 32 * 1024
/** Storage takes at most 128 keys per put or delete. */
const KEYS_PER_CALL = 128

interface StoredTask {
  pieces: number
}

const pieceKey = (taskId: string, index: number): string => `${PREFIX}${taskId}:${String(index).padStart(6, '0')}`

/**
 * Tasks in a Durable Object's storage, served from memory: the memory store (its retention and byte budgets)
 * with each task written to storage when it is created, when a follow-up resumes it and each time it settles
 * (completed, failed, canceled, rejected, or waiting for input): the whole task with its event log, in pieces. A task
 * is read back when the
 * object starts again (`restore()`, in `blockConcurrencyWhile`); one that was running when the object stopped
 * is failed with a reason, as on the file store. Retention deletes a task from storage as from memory.
 *
 * Costs: the whole task is written as a turn starts and as it settles, so a conversation of many turns on one
 * task writes its history again at each turn (bounded by the per-task budget, `maxTaskBytes`); the events of a
 * turn in progress are not written until it settles.
 */
export class DurableObjectTaskStore implements TaskStore {
  readonly keepsOwners = true
  readonly #memory: MemoryTaskStore
  readonly #storage: DurableObjectStorageLike
  readonly #logger: DurableObjectStoreOptions['logger']
  /** How many pieces each stored task has now: a shorter rewrite deletes the rest. */
  readonly #pieces = new Map<string, number>()
  /**
   * Writes go to storage one after the other: a task saved twice in quick succession (created, then settled)
   * must not have the pieces of its two versions interleave.
   */
  #writes: Promise<void> = Promise.resolve()

  constructor(storage: DurableObjectStorageLike, options: DurableObjectStoreOptions = {}) {
    this.#storage = storage
    this.#logger = options.logger
    const env = options.env ?? processEnv()
    const maxBytes =
      options.maxBytes ??
      (envValue(env, 'A2A_STORE_MAX_BYTES') === undefined ? DEFAULT_DURABLE_OBJECT_STORE_MAX_BYTES : undefined)
    this.#memory = new MemoryTaskStore({ ...options, env, ...(maxBytes !== undefined && { maxBytes }) }, (taskId) => {
      this.#delete(taskId).catch((error: unknown) =>
        this.#logger?.warn(`Task store: could not delete task ${taskId} from storage: ${(error as Error).message}`),
      )
    })
  }

  /**
   * Reads the stored tasks back into memory, oldest settled first; fails the ones left running. Call it once, first.
   */
  async restore(now = Date.now()): Promise<void> {
    const stored = await this.#storage.list<StoredTask | string>({ prefix: PREFIX })
    const snapshots: TaskSnapshot[] = []
    for (const [key, value] of stored) {
      if (typeof value === 'string') continue
      const taskId = key.slice(PREFIX.length)
      const pieces: string[] = []
      for (let index = 0; index < value.pieces; index++) pieces.push(stored.get(pieceKey(taskId, index)) as string)
      try {
        snapshots.push(parseSnapshot(pieces.join('')))
        this.#pieces.set(taskId, value.pieces)
      } catch {
        this.#logger?.warn(`Task store: task ${taskId} could not be read back from storage; it is deleted`)
        this.#pieces.set(taskId, value.pieces)
        await this.#delete(taskId)
      }
    }
    const stopped: TaskSnapshot[] = []
    for (const snapshot of snapshots.sort((a, b) => a.settledAt - b.settledAt)) {
      const { task, events, keptAfter, settledAt, owner } = snapshot
      if (settledAt && now - settledAt > this.#memory.ttlMs) {
        await this.#delete(task.id)
        continue
      }
      if (isSettled(task.status.state)) this.#memory.restore(task, events ?? undefined, settledAt, keptAfter, owner)
      else stopped.push(snapshot)
    }
    for (const { task, events, keptAfter, owner } of stopped) {
      const was = task.status.state
      this.#memory.restore(task, failStopped(task, events ?? undefined, keptAfter), now, keptAfter, owner)
      this.#logger?.warn(`Task store: task ${task.id} was ${was} when the object stopped; it is failed`)
      if (this.#memory.has(task.id)) await this.#save(task)
    }
  }

  get size(): number {
    return this.#memory.size
  }

  get bytes(): number {
    return this.#memory.bytes
  }

  /** The object's storage answers a read (`/readyz`): a prefix no key has, so nothing is read back. */
  async reachable(): Promise<void> {
    await this.#storage.list({ prefix: PROBE_PREFIX })
  }

  get(taskId: string, owner?: string): Task | undefined {
    return this.#memory.get(taskId, owner)
  }

  async create(task: Task, owner?: string): Promise<void> {
    // The owner goes into the task's first save (`#save` asks the memory store), in the same put.
    this.#memory.create(task, owner)
    try {
      await this.#save(task)
    } catch (error) {
      // Not stored, so not created: the client gets an error and no task stays behind, forever "submitted".
      this.#memory.forget(task.id)
      throw error
    }
  }

  append(task: Task, event: TaskEvent): Promise<void> | undefined {
    // A follow-up resuming a settled task starts a turn: written at once, so a restart in the middle of the turn
    // finds the task running (and fails it) with the follow-up in its history, not the turn before it.
    const resumed = this.#memory.settledAt(task.id) > 0
    this.#memory.append(task, event)
    // Larger than the whole byte budget, it was let go as it settled: not saved.
    if (!this.#memory.has(task.id)) return undefined
    return resumed || (event.kind === 'status-update' && event.final) ? this.#save(task) : undefined
  }

  events(taskId: string, afterSeq?: number): TaskEvent[] | undefined {
    return this.#memory.events(taskId, afterSeq)
  }

  lastSeq(taskId: string): number | undefined {
    return this.#memory.lastSeq(taskId)
  }

  list(query: TaskQuery): TaskPage {
    return this.#memory.list(query)
  }

  close(): void {
    this.#memory.close()
  }

  /** Writes the task as it is now, after the writes before. */
  #save(task: Task): Promise<void> {
    const taskId = task.id
    const snapshot: TaskSnapshot = {
      task,
      events: this.#memory.events(taskId) ?? null,
      keptAfter: this.#memory.keptAfter(taskId),
      settledAt: this.#memory.settledAt(taskId),
      // Left out of the JSON when undefined: an unowned task is stored as before.
      owner: this.#memory.ownerOf(taskId),
    }
    const json = JSON.stringify(snapshot)
    const count = Math.max(1, Math.ceil(json.length / PIECE_CHARS))
    const entries: [string, StoredTask | string][] = []
    for (let index = 0; index < count; index++)
      entries.push([pieceKey(taskId, index), json.slice(index * PIECE_CHARS, (index + 1) * PIECE_CHARS)])
    // The header last: a reader that finds it finds every piece it counts (one put is atomic; several are in order).
    entries.push([`${PREFIX}${taskId}`, { pieces: count }])
    const before = this.#pieces.get(taskId) ?? 0
    this.#pieces.set(taskId, count)
    const stale: string[] = []
    for (let index = count; index < before; index++) stale.push(pieceKey(taskId, index))
    return this.#queue(() => {
      // Every put and delete of a save is issued with no await between them: a Durable Object commits such a
      // run of writes atomically, so a crash never leaves the old header counting pieces of the new text.
      const writes: Promise<unknown>[] = []
      for (let start = 0; start < entries.length; start += KEYS_PER_CALL)
        writes.push(this.#storage.put(Object.fromEntries(entries.slice(start, start + KEYS_PER_CALL))))
      for (let start = 0; start < stale.length; start += KEYS_PER_CALL)
        writes.push(this.#storage.delete(stale.slice(start, start + KEYS_PER_CALL)))
      return Promise.all(writes).then(() => undefined)
    })
  }

  #delete(taskId: string): Promise<void> {
    const count = this.#pieces.get(taskId) ?? 0
    this.#pieces.delete(taskId)
    const keys = [`${PREFIX}${taskId}`]
    for (let index = 0; index < count; index++) keys.push(pieceKey(taskId, index))
    return this.#queue(() => {
      const writes: Promise<unknown>[] = []
      for (let start = 0; start < keys.length; start += KEYS_PER_CALL)
        writes.push(this.#storage.delete(keys.slice(start, start + KEYS_PER_CALL)))
      return Promise.all(writes).then(() => undefined)
    })
  }

  #queue(write: () => Promise<void>): Promise<void> {
    const done = this.#writes.then(write)
    // A failed write is reported to its caller; the next ones go on.
    this.#writes = done.catch(() => {})
    return done
  }
}

/** A stored task's JSON; throws when it is not one (an owner that is not a string: damaged). */
function parseSnapshot(json: string): TaskSnapshot {
  const snapshot = JSON.parse(json) as TaskSnapshot
  if (snapshot.owner !== undefined && typeof snapshot.owner !== 'string') throw new Error('owner is not a string')
  return snapshot
}

/** A task store in a Durable Object's storage; see `DurableObjectTaskStore`. Call `restore()` before serving. */
export function createDurableObjectStore(
  storage: DurableObjectStorageLike,
  options?: DurableObjectStoreOptions,
): DurableObjectTaskStore {
  return new DurableObjectTaskStore(storage, options)
}
