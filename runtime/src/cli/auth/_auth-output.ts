import { printableLine } from '../output/_sanitize.js'
import type { StoredToken } from './_token-file.js'

export type OutputFormat = 'text' | 'json'

/**
 * What is said about a stored token: never the token itself. Text: `Label: value` lines, one block per token;
 * json: one document.
 */
export function tokenSummary(token: StoredToken, now = Date.now()) {
  return {
    agentCard: token.cardUrl,
    issuer: token.issuer,
    flow: token.flow,
    clientId: token.clientId,
    scope: token.scope ?? null,
    expiresAt: token.expiresAt === undefined ? null : new Date(token.expiresAt).toISOString(),
    expired: token.expiresAt !== undefined && token.expiresAt <= now,
    refreshToken: token.refreshToken !== undefined,
  }
}

export function summaryLines(token: StoredToken, now = Date.now()): string[] {
  const summary = tokenSummary(token, now)
  const expires =
    summary.expiresAt === null
      ? 'never said'
      : `${summary.expiresAt} (${summary.expired ? 'expired' : `in ${Math.round((token.expiresAt! - now) / 1000)} s`})`
  return [
    `Agent card: ${summary.agentCard}`,
    `Issuer: ${summary.issuer}`,
    `Flow: ${summary.flow}`,
    `Client: ${summary.clientId}`,
    `Scope: ${summary.scope ?? '(the server default)'}`,
    `Expires: ${expires}`,
    `Refresh token: ${summary.refreshToken ? 'yes' : 'no'}`,
  ]
}

/**
 * Prints stdout's part: `Label: value` lines (values from servers and files may hold anything: no control
 * character reaches the terminal), or one JSON document on one line. Failures are the output contract's
 * (`createOutput(…).error`).
 */
export function print(format: OutputFormat, text: string[], json: unknown): void {
  process.stdout.write(format === 'json' ? `${JSON.stringify(json)}\n` : `${text.map(printableLine).join('\n')}\n`)
}
