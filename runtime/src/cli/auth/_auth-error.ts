// The failures of `a2a auth`, each with the CLI's error code (its exit status follows from it: exitStatusOf) and a
// next step.

export type AuthErrorCode =
  | 'A2ACLI_ERR_USAGE'
  | 'A2ACLI_ERR_CARD_NOT_FOUND'
  | 'A2ACLI_ERR_CARD_INVALID'
  | 'A2ACLI_ERR_UNREACHABLE'
  | 'A2ACLI_ERR_AUTH_FAILED'
  | 'A2ACLI_ERR_INTERNAL'

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
}
