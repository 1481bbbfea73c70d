/**
 * The two ways a call of the client fails. `A2AProtocolError`: the agent answered with an A2A error, named as A2A
 * names it whichever binding carried it (A2A v1.0 §3.3.2, §5.4). `A2AClientFailure`: the call never got an A2A
 * answer (no card, no connection, refused credentials, a timeout, an answer that is not the protocol's).
 */

/** A2A's error names (§3.3.2) and JSON-RPC's own (§9.5). */
export type A2AErrorName =
  | 'TaskNotFoundError'
  | 'TaskNotCancelableError'
  | 'PushNotificationNotSupportedError'
  | 'UnsupportedOperationError'
  | 'ContentTypeNotSupportedError'
  | 'InvalidAgentResponseError'
  | 'ExtendedAgentCardNotConfiguredError'
  | 'ExtensionSupportRequiredError'
  | 'VersionNotSupportedError'
  | 'ParseError'
  | 'InvalidRequestError'
  | 'MethodNotFoundError'
  | 'InvalidParamsError'
  | 'InternalError'
  /** An error code or reason no table names (an agent's own). */
  | 'UnknownError'

/** The agent answered an A2A error: its name, its message, and the binding's own code. */
export class A2AProtocolError extends Error {
  override readonly name: A2AErrorName
  constructor(
    name: A2AErrorName,
    message: string,
    /** The binding's own code: the JSON-RPC error code, or the REST ErrorInfo reason (else the status). */
    readonly a2aCode: number | string,
    /** The error's details as the agent sent them (JSON-RPC `data`, REST `details`). */
    readonly details?: unknown,
  ) {
    super(message)
    this.name = name
  }
}

/** Why a call got no A2A answer. */
export type A2AClientFailureKind =
  | 'card-not-found'
  | 'card-invalid'
  | 'unreachable'
  /** HTTP 401 or 403 and no credential was sent. */
  | 'credentials-missing'
  /** HTTP 401 or 403 to a request that carried a credential. */
  | 'auth-failed'
  | 'timeout'
  /** Not JSON, not the protocol's shape, or larger than the client reads. */
  | 'bad-response'

/** The call got no A2A answer: the card is missing or invalid, the agent unreachable, credentials refused… */
export class A2AClientFailure extends Error {
  override readonly name = 'A2AClientFailure'
  constructor(
    readonly kind: A2AClientFailureKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}
