import { cardIssues } from '../core/_card-rules.js'
import type { Finding } from '../dev/inspector/wire.js'

export type { Finding }

/**
 * Checks a served Agent Card by the card rules the runtime itself keeps (`core/_card-rules.ts`): every required
 * field and its type (errors: what the runtime refuses), then what makes a card weak for the clients that read it
 * (warnings). Each finding names the JSON path and how to fix it.
 */
export function checkCard(card: unknown): Finding[] {
  return cardIssues(card, 'served').map(({ level, path, message, hint }) => ({ level, path, message, hint }))
}
