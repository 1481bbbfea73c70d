import type { Command } from 'commander'
import { A2AClientFailure } from '../../client/errors.js'
import { checkCard } from '../_card-check.js'
import { NotDeclaredError } from '../output/_failures.js'
import { withClientOptions } from './_client-options.js'
import { runSession } from './_session.js'

/**
 * `a2a card get`: reads an agent's card as a client does (a host's well-known card, a card URL or a file) and
 * prints it; `--validate` also checks it by the card rules (an error fails the command, warnings go to stderr);
 * `--extended` fetches the extended card the agent gives authenticated callers.
 */
export function registerCardGet(card: Command): void {
  withClientOptions(card.command('get').description("Print an agent's card: what it is, does, speaks and accepts"))
    .option('--validate', 'also check the card by the A2A card rules', false)
    .option('--extended', 'fetch the extended card the agent gives authenticated callers', false)
    .action((_flags: unknown, self: Command) =>
      runSession(self, async (session) => {
        const client = await session.client()
        const { values } = session.settings
        let shown = client.card
        if (values.extended === true) {
          if (client.card.capabilities?.extendedAgentCard !== true)
            throw new NotDeclaredError(
              'UnsupportedOperationError',
              `${client.card.name} declares no extended card (its card's capabilities.extendedAgentCard), so it was not asked`,
            )
          shown = await client.getExtendedAgentCard({ signal: session.signal })
        }
        if (values.validate === true) {
          const findings = checkCard(shown)
          for (const finding of findings.filter((each) => each.level === 'warning'))
            session.output.warn(`${finding.path}: ${finding.message} (${finding.hint})`)
          const errors = findings.filter((each) => each.level === 'error')
          if (errors.length > 0)
            throw new A2AClientFailure(
              'card-invalid',
              `the card breaks ${errors.length} rule${errors.length === 1 ? '' : 's'}: ${errors
                .map((each) => `${each.path}: ${each.message}`)
                .join('; ')}`,
            )
        }
        return session.output.result('card', shown)
      }),
    )
}
