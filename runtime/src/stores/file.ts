import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { unlink } from 'node:fs/promises'
import { join } from 'node:path'
import writeFileAtomic from 'write-file-atomic'
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
  /** When the task last settled (ms since the epoch); 0 while it ran. */
  settledAt: number
}

const FILE_VERSION = 1
const TASK_FILE = /^[\w-]{1,200}\.json$/
export const STOPPED_REASON = 'The server stopped before the task finished'

/**
 * The embedded durable store: every task in its own JSON file under `dir/tasks/`, with no server to run.
 * Tasks are served from memory (the same retention as the memory store); each file is written when the task
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

  constructor(options: FileStoreOptions) {
    this.dir = options.dir
    this.#tasksDir = join(options.dir, 'tasks')
    mkdirSync(this.#tasksDir, { recursive: true })
    this.#memory = new MemoryTaskStore(options, (taskId) => this.#track(unlink(this.#path(taskId)).catch(() => {})))
    this.#load(options.logger)
  }

  get size(): number {
    return this.#memory.size
  }

  get(taskId: string): Task | undefined {
    return this.#memory.get(taskId)
  }

  create(task: Task): Promise<void> {
    this.#memory.create(task)
    return this.#save(task, 0)
  }

  append(task: Task, event: TaskEvent): Promise<void> | undefined {
    this.#memory.append(task, event)
    if (event.kind !== 'status-update' || !event.final) return undefined
    return this.#save(task, Date.now())
  }

  events(taskId: string, afterSeq?: number): TaskEvent[] | undefined {
    return this.#memory.events(taskId, afterSeq)
  }

  list(query: TaskQuery): TaskPage {
    return this.#memory.list(query)
  }

  /** Removes settled tasks older than the time-to-live, from memory and disk. */
  sweep(now?: number): void {
    this.#memory.sweep(now)
  }

  /** Waits for the writes in flight. */
  async close(): Promise<void> {
    this.#memory.close()
    while (this.#pending.size) await Promise.all(this.#pending)
  }

  #path(taskId: string): string {
    return join(this.#tasksDir, `${taskId}.json`)
  }

  #save(task: Task, settledAt: number): Promise<void> {
    const file: TaskFile = { v: FILE_VERSION, task, events: this.#memory.events(task.id), settledAt }
    // Serialised now: the task object goes on changing after this call. write-file-atomic queues writes
    // to one file in call order, so a task's file always ends with its latest state.
    return this.#track(writeFileAtomic(this.#path(task.id), JSON.stringify(file)))
  }

  #track(write: Promise<void>): Promise<void> {
    this.#pending.add(write)
    return write.finally(() => this.#pending.delete(write))
  }

  /** Reads the files back, oldest settled first; fails what was left running; drops leftovers of crashes. */
  #load(logger: FileStoreOptions['logger']): void {
    const restored: TaskFile[] = []
    for (const name of readdirSync(this.#tasksDir)) {
      const path = join(this.#tasksDir, name)
      // write-file-atomic's temporary files (`<id>.json.<n>`) are writes a crash interrupted.
      if (!TASK_FILE.test(name)) {
        rmSync(path, { force: true })
        continue
      }
      try {
        const file = JSON.parse(readFileSync(path, 'utf8')) as TaskFile
        if (file.v !== FILE_VERSION || typeof file.task?.id !== 'string') throw new Error(`not a task file of version ${FILE_VERSION}`)
        restored.push(file)
      } catch (error) {
        logger?.warn(`Task store: skipping ${path}: ${(error as Error).message}`)
      }
    }
    restored.sort((a, b) => a.settledAt - b.settledAt)
    const now = Date.now()
    for (const file of restored) {
      if (file.settledAt && now - file.settledAt > this.#memory.ttlMs) {
        rmSync(this.#path(file.task.id), { force: true })
        continue
      }
      if (isSettled(file.task.status.state)) {
        this.#memory.restore(file.task, file.events, file.settledAt)
        continue
      }
      const was = file.task.status.state
      const failed = failStopped(file.task, file.events)
      this.#memory.restore(file.task, failed, now)
      logger?.warn(`Task store: task ${file.task.id} was ${was} when the server stopped; it is failed`)
      void this.#track(writeFileAtomic(this.#path(file.task.id), JSON.stringify({ ...file, events: failed, settledAt: now })))
    }
  }
}

/** Ends a task whose process died: failed with a reason, its log closed by the final event. */
function failStopped(task: Task, events: TaskEvent[] | undefined): TaskEvent[] | undefined {
  const status: Task['status'] = {
    state: 'failed',
    timestamp: isoNow(),
    message: { kind: 'message', messageId: newId(), role: 'agent', parts: [{ kind: 'text', text: STOPPED_REASON }], contextId: task.contextId, taskId: task.id },
  }
  task.status = status
  if (!events) return undefined
  const seq = (events.at(-1)?.seq ?? 0) + 1
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
