// The failures of `a2a auth`, each with the CLI's error code, the exit status that code maps to, and a next step.

/** The `A2ACLI_ERR_*` codes `a2a auth` reports, with the exit status each maps to. */
const EXIT_STATUS = {
  A2ACLI_ERR_USAGE: 2,
  A2ACLI_ERR_CARD_NOT_FOUND: 3,
  A2ACLI_ERR_CARD_INVALID: 1,
  A2ACLI_ERR_UNREACHABLE: 3,
  A2ACLI_ERR_AUTH_FAILED: 4,
  A2ACLI_ERR_TIMEOUT: 5,
  A2ACLI_ERR_INTERNAL: 1,
} as const

export type AuthErrorCode = keyof typeof EXIT_STATUS

/** A failure said in one line (never a stack), with what to do about it. */
export class AuthError extends Error {
  override name = 'AuthError'

  constructor(
    readonly code: AuthErrorCode,
    message: string,
    readonly hint?: string,
  ) {
    super(message)
  }

  get exitStatus(): number {
    return EXIT_STATUS[this.code]
  }
}
