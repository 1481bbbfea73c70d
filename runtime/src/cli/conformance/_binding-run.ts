import { A2AClientFailure } from '../../client/errors.js'
import type { Seen } from './_expect.js'
import type { Results } from './_results.js'
import type { Answer, CallOptions, Json, Operation, StreamAnswer, Wire } from './_wire.js'

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
    /** Whether the wire's calls carry a credential: a refusal is then of it, else for want of one. */
    readonly credentialsSent: boolean,
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

  /**
   * Keeps what a call answered; a refusal stops the run as the client core's failure (`auth-failed` or
   * `credentials-missing`, exit 4): nothing past it can be checked.
   */
  private record<T extends Answer>(operation: string, answer: T): T {
    const { transport, url } = this.wire
    if (answer.refused)
      throw this.credentialsSent
        ? new A2AClientFailure(
            'auth-failed',
            `${transport} at ${url} refused the credentials sent with ${operation} (HTTP ${answer.refused})`,
          )
        : new A2AClientFailure(
            'credentials-missing',
            `${transport} at ${url} needs credentials for ${operation} (HTTP ${answer.refused})`,
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
