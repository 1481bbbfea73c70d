import { type Agent, defineAgent, type ExecutionContext } from '../agent.js'
import type { AgentCardInput } from '../types.js'
import { adapterCard, type FrameworkAgentFacts } from './_card.js'
import { runTurn, type TurnEvent } from './_turn.js'

export interface AdapterDefinition {
  /** The framework's name, as the card's defaults and failure reasons say it. */
  framework: string
  facts: FrameworkAgentFacts
  options: { card?: Partial<AgentCardInput>; timeoutMs?: number; showToolInput?: boolean; failureReason?: (error: unknown) => string | undefined }
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
