import { type Agent, defineAgent, type ExecutionContext } from '../agent.js'
import type { ConversationOptions } from '../core/_conversation.js'
import type { AgentCardInput } from '../types.js'
import { adapterCard, type FrameworkAgentFacts } from './_card.js'
import { runTurn, type TurnEvent } from './_turn.js'

/** What every adapter takes (each framework's adds its own). */
export interface AdapterOptions {
  /**
   * The card, or the fields of it to set; the rest is derived from the framework's agent (its name, a skill tagged with
   * its tools).
   */
  card?: Partial<AgentCardInput>
  /** How much of the context's earlier conversation a new run is given (see `ctx.conversation`). */
  conversation?: ConversationOptions
  /**
   * Longest one turn may run, in ms (see `defineAgent`).
   * @default undefined (no limit)
   */
  timeoutMs?: number
  /**
   * Whether a tool call's input goes to the client in its `working` update.
   * @default true
   */
  showToolInput?: boolean
  /**
   * The reason a client reads when the run fails with an error you recognise (a missing key, an endpoint that cannot
   * be reached). Without it, or when it returns `undefined`, the reason names only the error's class and HTTP
   * status: a provider's message may quote the prompt or part of a key. The error is logged in full either way.
   * @default undefined (the error's class and HTTP status)
   */
  failureReason?: (error: unknown) => string | undefined
}

export interface AdapterDefinition {
  /** The framework's name, as the card's defaults and failure reasons say it. */
  framework: string
  facts: FrameworkAgentFacts
  options: AdapterOptions
  /** One turn of the framework's agent, in the adapters' common events. */
  events(ctx: ExecutionContext): AsyncIterable<TurnEvent>
}

/**
 * The A2A agent of an adapter: its card from the framework's agent and the caller's fields, every turn run through
 * `runTurn`, and cancel accepted (the runtime fires the signal the framework's call was given, then cancels).
 */
export function adapterAgent(definition: AdapterDefinition): Agent {
  const { framework, facts, options } = definition
  return defineAgent({
    card: adapterCard(facts, options.card, framework),
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    execute: (ctx, task) =>
      runTurn(ctx, task, definition.events(ctx), {
        framework,
        ...(options.showToolInput !== undefined && { showToolInput: options.showToolInput }),
        ...(options.failureReason && { failureReason: options.failureReason }),
      }),
    cancel: () => {},
  })
}
