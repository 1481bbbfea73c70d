import { newId } from '../../core/_ids.js'
import { isSettled, isTerminal } from '../../core/_lifecycle.js'
import { A2AError, ServerUnavailableError, TaskNotCancelableError, TaskNotFoundError } from '../../errors.js'
import type { Task } from '../../types.js'
import type { RedisConnection } from './_connection.js'
import type { RedisKeys } from './_keys.js'

interface CancelRequest {
  requestId: string
  taskId: string
  replyTo: string
}

interface CancelReply {
  requestId: string
  task?: Task
  error?: { code: number; message: string; httpStatus: number; data?: unknown }
}

/** How often an asker looks for an answer (in the store too) and, without one, publishes its request again, in ms. */
const ASK_EVERY_MS = 100

/**
 * A cancel reaches the instance that runs the task: any instance publishes the request on one channel, the
 * instance running the task cancels it and answers on the asker's own channel, with the task or the error.
 *
 * Redis delivers a published message at most once, to the connections subscribed at that moment: an instance
 * whose listening connection is still connecting (it has just started) or reconnecting misses it, and so does an
 * asker its answer. So the asker publishes its request again until it has an answer, and the instance running
 * the task serves each request once and sends the same answer again to a request it has answered already.
 */
export class CancelForwarding {
  readonly #connection: RedisConnection
  readonly #keys: RedisKeys
  readonly #instanceId: string
  readonly #timeoutMs: number
  readonly #read: (taskId: string) => Promise<Task | undefined>
  readonly #replies = new Map<string, (reply: CancelReply) => void>()
  /** The requests this instance has served lately, by id, while their askers may still ask again. */
  readonly #served = new Map<string, { reply: Promise<CancelReply>; answered: boolean }>()
  #handler: ((taskId: string) => Promise<Task> | undefined) | undefined

  /** `read` reads a task from the store, for a task that ends on its own before its instance sees the request. */
  constructor(
    connection: RedisConnection,
    keys: RedisKeys,
    instanceId: string,
    timeoutMs: number,
    read: (taskId: string) => Promise<Task | undefined>,
  ) {
    this.#connection = connection
    this.#keys = keys
    this.#instanceId = instanceId
    this.#timeoutMs = timeoutMs
    this.#read = read
    connection.listen(keys.cancel, (message) => void this.#serve(JSON.parse(message) as CancelRequest))
    connection.listen(keys.reply(instanceId), (message) => {
      const reply = JSON.parse(message) as CancelReply
      this.#replies.get(reply.requestId)?.(reply)
    })
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
      const message = JSON.stringify(request)
      const ask = () => this.#connection.run((redis) => redis.publish(this.#keys.cancel, message))
      await ask()
      // The task may end on its own before its instance sees the request; then the store has the answer.
      const deadline = Date.now() + this.#timeoutMs
      for (;;) {
        const pause = new Promise<undefined>((resolve) => setTimeout(resolve, ASK_EVERY_MS))
        const reply = await Promise.race([answered, pause])
        if (reply?.error)
          throw new A2AError(reply.error.code, reply.error.message, reply.error.httpStatus, reply.error.data)
        if (reply?.task) return reply.task
        const task = await this.#read(taskId)
        if (!task) throw new TaskNotFoundError(taskId)
        if (isTerminal(task.status.state)) {
          if (task.status.state === 'canceled') return task
          throw new TaskNotCancelableError(`Task cannot be canceled: it is already ${task.status.state}`)
        }
        // At rest (waiting for input) and held by no one: the caller cancels it itself.
        if (
          isSettled(task.status.state) &&
          !(await this.#connection.run((redis) => redis.exists(this.#keys.lease(taskId))))
        )
          return undefined
        if (Date.now() > deadline)
          throw new ServerUnavailableError(
            `The instance running task ${taskId} did not answer the cancel; retry shortly`,
            503,
          )
        // No answer yet: the request (or its answer) may have been published while a connection was not listening.
        await ask()
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
    await this.#connection.client.publish(this.#keys.reply(request.replyTo), JSON.stringify(reply)).catch(() => {})
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
