import type { ConversationOptions } from './core/_conversation.js'
import { ConfigurationError } from './errors.js'
import type { Logger } from './logger.js'
import type { AgentCardInput, Message, Part, Principal, TaskState } from './types.js'

/** What `execute` and `cancel` learn about the request. */
export interface ExecutionContext {
  /** The user message that started (or resumed) the task. */
  readonly message: Message
  /** `message.parts`. */
  readonly parts: Part[]
  /** The text parts of the message joined in order. */
  readonly text: string
  /** The task the message started or resumed. */
  readonly taskId: string
  /** The conversation the task belongs to: tasks with the same `contextId` (see `conversation()`). */
  readonly contextId: string
  /** Every message of the task so far, oldest first, including this one. */
  readonly history: readonly Message[]
  /** Fires when the task is canceled (or the server shuts down past its grace period). */
  readonly signal: AbortSignal
  /**
   * Who sent this message (for a cancel hook: who asked to cancel), as the credential proves it: subject, issuer,
   * scopes and claims of a JWT, or the name given with a listed credential. Undefined when the agent checks no
   * credentials. Only this caller can see, follow, cancel or continue the task.
   */
  readonly principal: Principal | undefined
  /**
   * The conversation so far in this task's context, oldest first: every earlier task with the same `contextId`
   * as its messages followed by its answer (its artifacts as one agent message), then this task's history. It
   * lets a model see what was said before, as a chat does. Bounded: the newest earlier tasks that fit
   * `maxBytes` (default 256 KiB of memory, about the text) and `maxTasks` (default 50); this task's history always
   * comes whole.
   * Reads the task store (every store can: memory, file, Redis, Durable Object), so call it once per turn.
   */
  conversation(options?: ConversationOptions): Promise<Message[]>
  /** The server's logger: what the client must not see (a provider's error in full) goes here. */
  readonly logger: Logger
  /**
   * What AWS Bedrock AgentCore Runtime says of this request in its headers (its session, the workload access token,
   * the custom headers passed through), undefined when the request carries none. Served elsewhere, any client may
   * send these headers: trust them only behind AgentCore, which sets them.
   */
  readonly agentCore: AgentCoreRequest | undefined
}

/** The request headers AWS Bedrock AgentCore Runtime documents for an agent's container, as `ctx.agentCore` has them. */
export interface AgentCoreRequest {
  /** `X-Amzn-Bedrock-AgentCore-Runtime-Session-Id`: the runtime session the request belongs to. */
  readonly sessionId: string | undefined
  /** `WorkloadAccessToken`: the token for AgentCore Identity's outbound credentials, when Runtime hands one. */
  readonly workloadAccessToken: string | undefined
  /** Every `X-Amzn-Bedrock-AgentCore-Runtime-Custom-*` header, by its lower-case name. */
  readonly customHeaders: Readonly<Record<string, string>>
}

/** Content of an artifact: a string is a text part, an array is parts, any other object is a data part. */
export type ArtifactContent = string | Part[] | Record<string, unknown>

/** Content of a status message: a string is a text part. */
export type MessageContent = string | Part[]

/** How `task.artifact()` files its content: a new artifact, or the next chunk of one. */
export interface ArtifactOptions {
  /** Reuse an id to send an artifact in chunks; the runtime generates one otherwise. */
  artifactId?: string
  /** A name a client may show for the artifact. */
  name?: string
  /** What the artifact holds, for a client to show. */
  description?: string
  /** Extension data the artifact carries to the client as it is. */
  metadata?: Record<string, unknown>
  /** Add the parts to the artifact with the same `artifactId` instead of starting a new one. */
  append?: boolean
  /** Mark the final chunk of a chunked artifact. */
  lastChunk?: boolean
}

/**
 * The agent's hold on its task. Every method publishes an event to streaming clients and updates the
 * stored task. Once the task is terminal (completed, failed, canceled, rejected) a further move throws
 * `TaskTerminalError`, except after a cancel, where late calls are ignored: the agent may not have seen the
 * abort yet.
 */
export interface TaskHandle {
  /** The task's id. */
  readonly id: string
  /** The task's context: the conversation it belongs to. */
  readonly contextId: string
  /** The task's state now: each move below changes it. */
  readonly state: TaskState
  /** The runtime submits every task before `execute` runs; kept for agents written against the operation. */
  submit(): void
  /** Start work (the runtime already has when `execute` runs) or report progress with a message. Progress
   *  is never the answer: put the answer in an artifact. */
  working(message?: MessageContent): void
  /** Ask the client for more input; the task resumes when a message names it. */
  inputRequired(message: MessageContent): void
  /**
   * Ask the client for an authorization the task needs (A2A §7.6: an OAuth token for an API, a person's approval),
   * saying in the message what and how; the task resumes when a message names it. That follow-up authorizes
   * nothing by itself (§7.6.4): check whatever it carries, or what arrived out of band, before acting on it.
   */
  authRequired(message: MessageContent): void
  /**
   * The out-of-band form of `authRequired`: the task waits in `auth-required` with the message while `until`
   * obtains the authorization by other means (an OAuth callback, an approval service), then moves back to
   * `working` and returns what `until` resolved to. Clients follow the task meanwhile (SubscribeToTask, push,
   * GetTask); a follow-up message is refused while it waits. `until` gets the task's signal: it fires on cancel and
   * shutdown, and a rejection of `until` is the agent's to handle (uncaught, it fails the task).
   */
  authorization<T>(message: MessageContent, until: (signal: AbortSignal) => Promise<T>): Promise<T>
  /** Add a result. Returns the artifact id (pass it back with `append` for the next chunk). */
  artifact(content: ArtifactContent, options?: ArtifactOptions): string
  /** End the task done, its answer in the artifacts sent before; the message, if any, is its final status. */
  complete(message?: MessageContent): void
  /** End the task failed; the reason is what the client reads (a provider's error in full goes to `ctx.logger`). */
  fail(reason?: MessageContent): void
  /** End the task canceled, as the agent's own decision. */
  cancel(message?: MessageContent): void
  /** Refuse the task before doing any work. */
  reject(reason?: MessageContent): void
  /**
   * Answer with a message instead of a task's result, as a stateless agent does: the A2A client gets a Message
   * (v1.0 `result.message`, v0.3 `kind: "message"`; a stream sends it as its one event and closes); the platform
   * dialect, whose contract answers with a Task, gets the task completed with the reply as its artifact. The
   * task is kept like any other (completed, the reply its artifact). Needs `messageReplies: true` in
   * `defineAgent`, and must be the agent's first move in a task's first turn: after another move, answer with
   * `artifact()` and `complete()`.
   */
  reply(message: MessageContent): void
}

/** What `defineAgent` takes: the agent's card and the code that runs its tasks. */
export interface AgentDefinition {
  /** The agent's card as its author declares it; the runtime adds `url` and the interfaces it serves. */
  card: AgentCardInput
  /** Runs once per user message. Must end the task (complete, fail, cancel) or ask for input; a return
   *  or throw that leaves it running makes the runtime fail it. */
  execute(ctx: ExecutionContext, task: TaskHandle): unknown
  /**
   * Called on `tasks/cancel` of a task that has not ended. Throw `TaskNotCancelableError` to refuse;
   * otherwise the runtime fires `ctx.signal` and cancels the task unless this ended it.
   *
   * **Important:** without `cancel`, every cancel request answers TaskNotCancelable.
   */
  cancel?(ctx: ExecutionContext, task: TaskHandle): unknown
  /**
   * Longest one turn of `execute` may run, in ms. Past it the task is failed ("The task took longer than
   * its limit of … ms") and `ctx.signal` fires; the agent's later moves on the task are refused. A turn
   * that asks for input is done with its turn.
   * @default undefined (no limit)
   */
  timeoutMs?: number
  /**
   * The agent may answer with `task.reply()`. A new task is then marked `working` at the agent's first move
   * rather than before `execute` runs, so a streaming client has not been sent the task when a reply comes,
   * and gets the reply as the one Message of its stream.
   * @default false
   */
  messageReplies?: boolean
}

/** An agent as `defineAgent` returns it, checked: what `serveAgent`, `createA2AApp` and `agentWorker` serve. */
export interface Agent extends AgentDefinition {
  readonly __a2aAgent: true
}

/**
 * Declares an agent. Checks the card's shape once, so a mistake shows at start-up, not on a request.
 *
 * @example
 * export default defineAgent({
 *   card: { name: 'Echo', description: 'Repeats what you say' },
 *   execute(ctx, task) {
 *     task.artifact(ctx.text)
 *     task.complete()
 *   },
 * })
 */
export function defineAgent(definition: AgentDefinition): Agent {
  if (!definition || typeof definition !== 'object') throw new ConfigurationError('defineAgent() needs an object')
  if (typeof definition.execute !== 'function')
    throw new ConfigurationError('defineAgent(): `execute` must be a function')
  if (definition.cancel !== undefined && typeof definition.cancel !== 'function') {
    throw new ConfigurationError('defineAgent(): `cancel` must be a function when given')
  }
  if (!definition.card || typeof definition.card !== 'object')
    throw new ConfigurationError('defineAgent(): `card` is required')
  const { timeoutMs } = definition
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0 && timeoutMs <= 2 ** 31 - 1)) {
    throw new ConfigurationError(
      `defineAgent(): \`timeoutMs\` must be a whole number of milliseconds from 1 to ${2 ** 31 - 1} (got ${timeoutMs})`,
    )
  }
  if (definition.messageReplies !== undefined && typeof definition.messageReplies !== 'boolean') {
    throw new ConfigurationError(
      `defineAgent(): \`messageReplies\` must be true or false (got ${JSON.stringify(definition.messageReplies)})`,
    )
  }
  return { ...definition, __a2aAgent: true }
}
