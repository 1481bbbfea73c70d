import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { isSettled } from '../core/_lifecycle.js'
import { isoNow } from '../core/_clock.js'
import { newId } from '../core/_ids.js'
import type { Logger } from '../_logger.js'
import type { Task, TaskEvent } from '../types.js'
import type { TaskPage, TaskQuery, TaskStore } from './_store.js'
import { MemoryTaskStore, type MemoryStoreOptions } from './memory.js'

export interface FileStoreOptions extends MemoryStoreOptions {
  /** The directory that holds the tasks (created when missing). One server process per directory. */
  dir: string
  /** Where start-up repairs are reported. Default: silent. */
  logger?: Pick<Logger, 'warn'>
}

/** What one task's file holds. */
interface TaskFile {
  v: 1
  task: Task
  events: TaskEvent[] | undefined
  /** The events numbered up to this one were dropped from `events` (the log keeps the newest). Absent: 0. */
  keptAfter?: number
  /** When the task last settled (ms since the epoch); 0 while it ran. */
  settledAt: number
}

const FILE_VERSION = 1
const TASK_FILE = /^[\w-]{1,200}\.json$/
export const STOPPED_REASON = 'The server stopped before the task finished'
const REPAIR_GAP = 2 ** 20
// Required when a file store is made: importing it would cost every `a2a start` ~20 ms, store or not.
const require = createRequire(import.meta.url)
type WriteFileAtomic = (path: string, data: string) => Promise<void>
let writeFileAtomic: WriteFileAtomic
const noop = (): void => {}

/**
 * The embedded durable store: every task in its own JSON file under `dir/tasks/`, with no server to run.
 * Tasks are served from memory (the same retention as the memory store, by count, bytes and age: a task it
 * lets go has its file deleted, so the directory holds what memory holds); each file is written when the task
 * is created and each time it settles (terminal, or waiting for input), through write-file-atomic (a temporary
 * file, fsync, rename), so a crash mid-write leaves the previous version of that file and never touches
 * another task's. A `message/send` that answers "completed" has its task on disk first.
 *
 * At start it reads every file back; a task the previous process left running is failed with a reason (the
 * agent code that ran it is gone), so no task stays `working` forever.
 */
export class FileTaskStore implements TaskStore {
  readonly dir: string
  readonly #memory: MemoryTaskStore
  readonly #tasksDir: string
  readonly #pending = new Set<Promise<void>>()
  // The last write of each task with one in flight: a deletion waits for it, or the write would bring the file back.
  readonly #lastWrite = new Map<string, Promise<void>>()
  readonly #logger: FileStoreOptions['logger']

  constructor(options: FileStoreOptions) {
    this.dir = options.dir
    this.#tasksDir = join(options.dir, 'tasks')
    writeFileAtomic ??= require('write-file-atomic') as WriteFileAtomic
    mkdirSync(this.#tasksDir, { recursive: true })
    this.#logger = options.logger
    this.#memory = new MemoryTaskStore(options, (taskId) => void this.#remove(taskId))
    this.#load()
  }

  get size(): number {
    return this.#memory.size
  }

  /** Bytes its memory copy holds now (tasks and event logs, as counted against `maxBytes`). */
  get bytes(): number {
    return this.#memory.bytes
  }

  get(taskId: string): Task | undefined {
    return this.#memory.get(taskId)
  }

  async create(task: Task): Promise<void> {
    this.#memory.create(task)
    try {
      await this.#save(task, 0)
    } catch (error) {
      // Not on disk, so not created: the client gets an error and no task stays behind, forever "submitted".
      this.#memory.forget(task.id)
      throw error
    }
  }

  append(task: Task, event: TaskEvent): Promise<void> | undefined {
    this.#memory.append(task, event)
    if (event.kind !== 'status-update' || !event.final) return undefined
    // Larger than the whole byte budget, it was let go as it settled (its file is being deleted): not saved.
    if (!this.#memory.has(task.id)) return undefined
    return this.#save(task, Date.now())
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

  /** Removes settled tasks older than the time-to-live, from memory and disk. */
  sweep(now?: number): void {
    this.#memory.sweep(now)
  }

  /** Waits for the writes in flight (a failed one was reported to its caller). */
  async close(): Promise<void> {
    this.#memory.close()
    while (this.#pending.size) await Promise.allSettled(this.#pending)
  }

  #path(taskId: string): string {
    return join(this.#tasksDir, `${taskId}.json`)
  }

  #save(task: Task, settledAt: number): Promise<void> {
    const events = this.#memory.events(task.id)
    const keptAfter = this.#memory.keptAfter(task.id)
    const file: TaskFile = { v: FILE_VERSION, task, events, ...(keptAfter && { keptAfter }), settledAt }
    // Serialised now: the task object goes on changing after this call. write-file-atomic queues writes
    // to one file in call order, so a task's file always ends with its latest state.
    return this.#write(task.id, JSON.stringify(file))
  }

  #write(taskId: string, json: string): Promise<void> {
    const write = this.#track(writeFileAtomic(this.#path(taskId), json))
    this.#lastWrite.set(taskId, write)
    const settled = () => {
      if (this.#lastWrite.get(taskId) === write) this.#lastWrite.delete(taskId)
    }
    write.then(settled, settled)
    return write
  }

  /** Deletes a task's file once its last write has landed. */
  #remove(taskId: string): Promise<void> {
    const after = this.#lastWrite.get(taskId) ?? Promise.resolve()
    return this.#track(after.then(noop, noop).then(() => unlink(this.#path(taskId)).catch(noop)))
  }

  #track(work: Promise<void>): Promise<void> {
    this.#pending.add(work)
    const done = () => this.#pending.delete(work)
    work.then(done, done)
    return work
  }

  /** Reads the files back, oldest settled first; fails what was left running; drops leftovers of crashes. */
  #load(): void {
    const logger = this.#logger
    const restored: TaskFile[] = []
    for (const entry of readdirSync(this.#tasksDir, { withFileTypes: true })) {
      if (!entry.isFile()) continue
      const name = entry.name
      const path = join(this.#tasksDir, name)
      // write-file-atomic's temporary files (`<id>.json.<n>`) are writes a crash interrupted.
      if (!TASK_FILE.test(name)) {
        if (/\.json\.\d+$/.test(name)) rmSync(path, { force: true })
        continue
      }
      try {
        const file = JSON.parse(readFileSync(path, 'utf8')) as TaskFile
        if (file.v !== FILE_VERSION || typeof file.task?.id !== 'string') throw new Error(`not a task file of version ${FILE_VERSION}`)
        if (`${file.task.id}.json` !== name) throw new Error('the task inside has another id')
        restored.push(file)
      } catch (error) {
        logger?.warn(`Task store: skipping ${path}: ${(error as Error).message}`)
      }
    }
    restored.sort((a, b) => a.settledAt - b.settledAt)
    const now = Date.now()
    const stopped: TaskFile[] = []
    for (const file of restored) {
      if (file.settledAt && now - file.settledAt > this.#memory.ttlMs) {
        rmSync(this.#path(file.task.id), { force: true })
        continue
      }
      if (isSettled(file.task.status.state)) this.#memory.restore(file.task, file.events, file.settledAt, file.keptAfter)
      else stopped.push(file)
    }
    // Settled now, so they go last: retention walks the oldest settled first.
    for (const file of stopped) {
      const was = file.task.status.state
      const failed = failStopped(file.task, file.events, file.keptAfter ?? 0)
      this.#memory.restore(file.task, failed, now, file.keptAfter)
      logger?.warn(`Task store: task ${file.task.id} was ${was} when the server stopped; it is failed`)
      this.#write(file.task.id, JSON.stringify({ ...file, events: failed, settledAt: now })).catch((error: unknown) => {
        logger?.warn(`Task store: could not save the failure of task ${file.task.id}: ${(error as Error).message}`)
      })
    }
  }
}

/** Ends a task whose process died: failed with a reason, its log closed by the final event. */
function failStopped(task: Task, events: TaskEvent[] | undefined, keptAfter: number): TaskEvent[] | undefined {
  const status: Task['status'] = {
    state: 'failed',
    timestamp: isoNow(),
    message: { kind: 'message', messageId: newId(), role: 'agent', parts: [{ kind: 'text', text: STOPPED_REASON }], contextId: task.contextId, taskId: task.id },
  }
  task.status = status
  if (!events) return undefined
  // The file holds the events up to the task's last settling; the stopped process may have sent more. The
  // repair is numbered past any of those, so a client resuming from one still receives it.
  const seq = (events.at(-1)?.seq ?? keptAfter) + REPAIR_GAP
  events.push({ kind: 'status-update', seq, taskId: task.id, contextId: task.contextId, status, final: true })
  return events
}

/**
 * The durable embedded store: tasks as files under `dir` that survive restarts and crashes; see
 * `FileTaskStore`. Same retention options as the memory store.
 */
export function createFileStore(options: FileStoreOptions): FileTaskStore {
  return new FileTaskStore(options)
}
