import { ProjectError } from '../_errors.js'
import { AuthError } from './_auth-error.js'
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

/** Prints stdout's part: lines of text, or one JSON document. */
export function print(format: OutputFormat, text: string[], json: unknown): void {
  process.stdout.write(format === 'json' ? `${JSON.stringify(json, null, 2)}\n` : `${text.join('\n')}\n`)
}

/**
 * A failure as the CLI's error envelope (on stdout in json mode, `Error:`/`Code:`/`Hint:` lines on stderr in text)
 * and the exit status its code maps to. Anything else is the CLI's own fault: its stack goes to stderr too, unless it
 * is a problem of the project's said in one line.
 */
export function reportFailure(format: OutputFormat, error: unknown): void {
  const failure =
    error instanceof AuthError
      ? error
      : new AuthError('A2ACLI_ERR_INTERNAL', (error as Error)?.message ?? String(error))
  if (!(error instanceof AuthError || error instanceof ProjectError))
    process.stderr.write(`${(error as Error)?.stack ?? error}\n`)
  if (format === 'json') {
    const envelope = { code: failure.code, message: failure.message, ...(failure.hint && { hint: failure.hint }) }
    process.stdout.write(`${JSON.stringify({ error: envelope })}\n`)
  } else {
    const lines = [
      `Error: ${failure.message}`,
      `Code: ${failure.code}`,
      ...(failure.hint ? [`Hint: ${failure.hint}`] : []),
    ]
    process.stderr.write(`${lines.join('\n')}\n`)
  }
  process.exitCode = failure.exitStatus
}
