import { newId } from '../../core/_ids.js'
import { isSettled, isTerminal } from '../../core/_lifecycle.js'
import { A2AError, ServerUnavailableError, TaskNotCancelableError, TaskNotFoundError } from '../../errors.js'
import type { Task } from '../../types.js'
import { instanceChannel } from './_listener.js'
import type { PgPool } from './_pg.js'

interface CancelRequest {
  requestId: string
  taskId: string
  replyTo: string
}

interface CancelReply {
  requestId: string
  task?: Task
  /** The task was canceled, and is too large for a notification: read it from the table. */
  read?: true
  error?: { code: number; message: string; httpStatus: number; data?: unknown }
}

/** How often an asker looks for an answer (in the table too) and, without one, sends its request again, in ms. */
const ASK_EVERY_MS = 100
/** The largest notification sent (PostgreSQL's limit is 8000 bytes). */
const MAX_PAYLOAD_BYTES = 7000

/**
 * A cancel reaches the instance that runs the task: the asker NOTIFYs the channel of the instance that holds the
 * task's lease (read from its row in the same statement), which cancels it and answers on the asker's own channel,
 * with the task or the error.
 *
 * A NOTIFY reaches only the connections listening when it commits: an instance whose listening connection is still
 * connecting (it has just started) or reconnecting misses it, and so does an asker its answer. So the asker sends
 * its request again until it has an answer or `timeoutMs` passed, and the instance running the task serves each
 * request once and sends the same answer again to a request it has answered already.
 */
export class CancelForwarding {
  readonly #pool: PgPool
  readonly #s: string
  readonly #instanceId: string
  readonly #timeoutMs: number
  readonly #read: (taskId: string) => Promise<Task | undefined>
  readonly #afterWrites: (taskId: string) => Promise<void>
  readonly #replies = new Map<string, (reply: CancelReply) => void>()
  /** The requests this instance has served lately, by id, while their askers may still ask again. */
  readonly #served = new Map<string, { reply: Promise<CancelReply>; answered: boolean }>()
  #handler: ((taskId: string) => Promise<Task> | undefined) | undefined

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
    this.#pool = pool
    this.#s = s
    this.#instanceId = instanceId
    this.#timeoutMs = timeoutMs
    this.#read = read
    this.#afterWrites = afterWrites
  }

  /** A notification on this instance's channel: a request to serve, or the answer to one of its own. */
  heard(payload: string): void {
    const message = JSON.parse(payload) as CancelRequest | CancelReply
    if ('replyTo' in message) void this.#serve(message)
    else this.#replies.get(message.requestId)?.(message)
  }

  /** How this instance cancels a task it runs: undefined when it does not run it. */
  onCancel(handler: (taskId: string) => Promise<Task> | undefined): void {
    this.#handler = handler
  }

  /**
   * Asks the instance that runs `taskId` to cancel it: the canceled task, or undefined when the task waits for
   * input and nobody holds it (the caller cancels it itself).
   */
  async forward(taskId: string): Promise<Task | undefined> {
    const requestId = newId()
    const answered = new Promise<CancelReply>((resolve) => this.#replies.set(requestId, resolve))
    try {
      const request: CancelRequest = { requestId, taskId, replyTo: this.#instanceId }
      // To the holder of a live lease, found and notified in one statement; `held` says whether there is one.
      const ask = async () => {
        const [row] = await this.#pool.query<{ held: boolean }>(
          {
            name: `a2a-cancel-${this.#s}`,
            text: `SELECT count(pg_notify('${instanceChannel('')}' || lease_holder, $2)) > 0 AS held
FROM ${this.#s}.a2a_tasks WHERE id = $1 AND lease_holder IS NOT NULL AND lease_until > now()`,
          },
          [taskId, JSON.stringify(request)],
        )
        return row?.held === true
      }
      let held = await ask()
      // The task may end on its own before its instance sees the request; then the table has the answer.
      const deadline = Date.now() + this.#timeoutMs
      for (;;) {
        const pause = new Promise<undefined>((resolve) => setTimeout(resolve, ASK_EVERY_MS))
        const reply = await Promise.race([answered, pause])
        if (reply?.error)
          throw new A2AError(reply.error.code, reply.error.message, reply.error.httpStatus, reply.error.data)
        if (reply?.task) return reply.task
        const task = await this.#read(taskId)
        if (reply?.read && task) return task
        if (!task) throw new TaskNotFoundError(taskId)
        if (isTerminal(task.status.state)) {
          if (task.status.state === 'canceled') return task
          throw new TaskNotCancelableError(`Task cannot be canceled: it is already ${task.status.state}`)
        }
        // At rest (waiting for input) and held by no one: the caller cancels it itself.
        if (isSettled(task.status.state) && !held) return undefined
        if (Date.now() > deadline)
          throw new ServerUnavailableError(
            `The instance running task ${taskId} did not answer the cancel; retry shortly`,
            503,
          )
        // No answer yet: the request (or its answer) may have been sent while a connection was not listening.
        held = await ask()
      }
    } finally {
      this.#replies.delete(requestId)
    }
  }

  async #serve(request: CancelRequest): Promise<void> {
    const { requestId } = request
    let served = this.#served.get(requestId)
    if (served) {
      // Asked again: the answer is on its way, or it was sent and the asker did not hear it (send it again).
      if (!served.answered) return
    } else {
      const answer = this.#handler?.(request.taskId)
      if (!answer) return // not running here
      const entry = { reply: replyOf(requestId, answer), answered: false }
      served = entry
      this.#served.set(requestId, entry)
      void entry.reply.then(() => (entry.answered = true))
      // Kept while the asker may still ask again: it gives up after the timeout.
      setTimeout(() => this.#served.delete(requestId), 2 * this.#timeoutMs).unref()
    }
    const reply = await served.reply
    let payload = JSON.stringify(reply)
    // PostgreSQL refuses a payload of 8000 bytes or more: a large task is read by the asker instead, once the
    // cancel's status is in the table (it waits behind the task's earlier writes, a stream's chunks).
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES && reply.task) {
      payload = JSON.stringify({ requestId, read: true })
      // Not landed in time: the asker reads the table until it holds the cancel's status, or gives up.
      await this.#afterWrites(request.taskId).catch(() => {})
    }
    await this.#pool
      .query({ text: 'SELECT pg_notify($1, $2)' }, [instanceChannel(request.replyTo), payload])
      .catch(() => {})
  }
}

/** The answer to a forwarded cancel: the canceled task, or the error the client is to get. */
async function replyOf(requestId: string, answer: Promise<Task>): Promise<CancelReply> {
  try {
    return { requestId, task: await answer }
  } catch (error) {
    return {
      requestId,
      error:
        error instanceof A2AError
          ? { code: error.code, message: error.message, httpStatus: error.httpStatus, data: error.data }
          : { code: -32603, message: 'Internal error', httpStatus: 200 },
    }
  }
}
