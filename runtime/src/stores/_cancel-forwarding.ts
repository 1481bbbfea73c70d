import { newId } from '../core/_ids.js'
import { isSettled, isTerminal } from '../core/_lifecycle.js'
import { A2AError, ServerUnavailableError, TaskNotCancelableError, TaskNotFoundError } from '../errors.js'
import type { Task } from '../types.js'

/** A cancel asked of the instance that runs `taskId`, answered on the channel of instance `replyTo`. */
export interface CancelRequest {
  requestId: string
  taskId: string
  replyTo: string
}

/** The answer to a forwarded cancel: the canceled task, or the error the client is to get. */
export interface CancelReply {
  requestId: string
  task?: Task
  /** The task was canceled, and is too large to send: read it from the store. */
  read?: true
  error?: { code: number; message: string; httpStatus: number; data?: unknown }
}

/** Whether some instance holds the task's lease, asked only of a task at rest (waiting for input). */
export type HeldCheck = () => Promise<boolean>

/** How often an asker looks for an answer (in the store too) and, without one, sends its request again, in ms. */
const ASK_EVERY_MS = 100

/**
 * A cancel reaches the instance that runs the task: the asker sends its request there, and that instance cancels
 * the task and answers on the asker's own channel, with the task or the error. A store gives the transport: how a
 * request is sent (`ask`) and an answer (`answer`), and it hands what its instance hears to `requested` and
 * `answered`.
 *
 * A transport may lose a message (each store's says how), so the asker sends its request again until it has an
 * answer or `timeoutMs` passed, and the instance running the task serves each request once and sends the same
 * answer again to a request it has answered already.
 */
export abstract class ForwardedCancels {
  readonly #instanceId: string
  readonly #timeoutMs: number
  readonly #read: (taskId: string) => Promise<Task | undefined>
  readonly #replies = new Map<string, (reply: CancelReply) => void>()
  /** The requests this instance has served lately, by id, while their askers may still ask again. */
  readonly #served = new Map<string, { reply: Promise<CancelReply>; answered: boolean }>()
  #handler: ((taskId: string) => Promise<Task> | undefined) | undefined

  /** `read` reads a task from the store, for a task that ends on its own before its instance sees the request. */
  constructor(instanceId: string, timeoutMs: number, read: (taskId: string) => Promise<Task | undefined>) {
    this.#instanceId = instanceId
    this.#timeoutMs = timeoutMs
    this.#read = read
  }

  /** Sends `request` towards the instance that runs its task (again, when it has no answer yet). */
  protected abstract ask(request: CancelRequest): Promise<HeldCheck>

  /** Sends `reply` to the channel of the instance that asked (`request.replyTo`). */
  protected abstract answer(request: CancelRequest, reply: CancelReply): Promise<void>

  /** A request heard by this instance: served when this instance runs its task. */
  protected requested(request: CancelRequest): void {
    void this.#serve(request)
  }

  /** An answer heard by this instance, to one of its own requests. */
  protected answered(reply: CancelReply): void {
    this.#replies.get(reply.requestId)?.(reply)
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
      let held = await this.ask(request)
      // The task may end on its own before its instance sees the request; then the store has the answer.
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
        if (isSettled(task.status.state) && !(await held())) return undefined
        if (Date.now() > deadline)
          throw new ServerUnavailableError(
            `The instance running task ${taskId} did not answer the cancel; retry shortly`,
            503,
          )
        // No answer yet: the request (or its answer) may have been sent while a connection was not listening.
        held = await this.ask(request)
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
    await this.answer(request, await served.reply).catch(() => {})
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
