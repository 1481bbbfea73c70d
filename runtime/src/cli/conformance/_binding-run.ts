import type { Seen } from './_expect.js'
import type { Results } from './_results.js'
import type { Answer, CallOptions, Json, Operation, StreamAnswer, Wire } from './_wire.js'

/** The agent refused the credentials given (or asked for some): nothing past it can be checked; exit 4. */
export class CredentialsRefused extends Error {}

/** What the checks of one interface share: its wire, the card, the results, and what the calls answered. */
export class BindingRun {
  /** Tasks this run started that may still be at rest (input-required…): canceled before the run ends. */
  readonly started = new Set<string>()

  constructor(
    readonly wire: Wire,
    readonly card: Json,
    readonly results: Results,
    readonly seen: Seen,
    readonly webhook: string,
  ) {}

  get transport() {
    return this.wire.transport
  }

  async call(operation: Operation, params: Json, options?: CallOptions): Promise<Answer> {
    const answer = await this.wire.call(operation, params, options)
    return this.record(operation, answer)
  }

  async stream(operation: 'SendStreamingMessage' | 'SubscribeToTask', params: Json): Promise<StreamAnswer> {
    return this.record(operation, await this.wire.stream(operation, params))
  }

  private record<T extends Answer>(operation: string, answer: T): T {
    if (answer.refused)
      throw new CredentialsRefused(
        `${this.wire.transport} at ${this.wire.url} refused ${operation} (HTTP ${answer.refused}): pass --bearer <token> or --api-key <key>`,
      )
    this.seen.answers.push({ operation, answer })
    return answer
  }

  /** Ends what this run left at rest, so that a check never leaves a task of the agent waiting. */
  async cleanUp(): Promise<void> {
    for (const id of this.started) await this.wire.call('CancelTask', { id }).catch(() => undefined)
    this.started.clear()
  }
}
