/**
 * Errors that reach the client as JSON-RPC errors. Each carries the A2A code; a binding may map a code
 * to its own dialect (the platform dialect answers an unknown task with -32602).
 */

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  Internal: -32603,
  Unauthorized: -32000,
  TaskNotFound: -32001,
  TaskNotCancelable: -32002,
  PushNotificationNotSupported: -32003,
  UnsupportedOperation: -32004,
  ContentTypeNotSupported: -32005,
  ExtendedCardNotConfigured: -32007,
  VersionNotSupported: -32009,
} as const

export class A2AError extends Error {
  override name = 'A2AError'
  constructor(
    readonly code: number,
    message: string,
    /** HTTP status of the response that carries this error. JSON-RPC errors travel in a 200 unless the
     *  failure is about HTTP itself (auth, size, content type). */
    readonly httpStatus = 200,
    /** JSON-RPC `error.data`, when a dialect adds detail (A2A v1.0: ErrorInfo). */
    readonly data?: unknown,
  ) {
    super(message)
  }
}

export class ParseError extends A2AError {
  override name = 'ParseError'
  constructor(message = 'Parse error: the body is not valid JSON') {
    super(ErrorCode.ParseError, message)
  }
}

export class InvalidRequestError extends A2AError {
  override name = 'InvalidRequestError'
  constructor(message: string, httpStatus = 200) {
    super(ErrorCode.InvalidRequest, `Invalid Request: ${message}`, httpStatus)
  }
}

export class MethodNotFoundError extends A2AError {
  override name = 'MethodNotFoundError'
  constructor(method: string) {
    super(ErrorCode.MethodNotFound, `Method not found: ${method}`)
  }
}

/**
 * The request's params are wrong (-32602): a store of your own throws it for a query it cannot answer, such as a
 * cursor it did not give; the client reads the message.
 */
export class InvalidParamsError extends A2AError {
  override name = 'InvalidParamsError'
  /**
   * What is wrong with the params, as the message says it after `Invalid params: ` (for a dialect that words it
   * otherwise).
   */
  readonly detail: string
  constructor(detail: string) {
    super(ErrorCode.InvalidParams, `Invalid params: ${detail}`)
    this.detail = detail
  }
}

/**
 * No task has the id (-32001; the platform dialect answers -32602 `Task not found`): a store of your own throws it
 * when a method is given a task it does not hold, such as a webhook saved for it (`pushConfigs.save`).
 */
export class TaskNotFoundError extends A2AError {
  override name = 'TaskNotFoundError'
  constructor(readonly taskId: string) {
    super(ErrorCode.TaskNotFound, 'Task not found')
  }
}

/** Throw from an agent's `cancel` to refuse; the runtime answers it for agents without `cancel`. */
export class TaskNotCancelableError extends A2AError {
  override name = 'TaskNotCancelableError'
  constructor(message = 'Task cannot be canceled') {
    super(ErrorCode.TaskNotCancelable, message)
  }
}

/**
 * A follow-up message to a task that has ended. The platform and v0.3 dialects answer it as invalid params;
 * A2A v1.0 names it UnsupportedOperation (§3.1.1).
 */
export class TaskEndedError extends InvalidParamsError {
  override name = 'TaskEndedError'
}

export class UnsupportedOperationError extends A2AError {
  override name = 'UnsupportedOperationError'
  constructor(message: string) {
    super(ErrorCode.UnsupportedOperation, message)
  }
}

export class UnauthorizedError extends A2AError {
  override name = 'UnauthorizedError'
  constructor(message: string) {
    super(ErrorCode.Unauthorized, message, 401)
  }
}

/**
 * A valid token that does not grant a scope the agent requires: 403 with RFC 6750's `insufficient_scope`, not 401,
 * as the same grant presented again would not do.
 */
export class InsufficientScopeError extends A2AError {
  override name = 'InsufficientScopeError'
  constructor(readonly missingScopes: string[]) {
    super(
      ErrorCode.Unauthorized,
      `Forbidden: the token does not grant the scope${missingScopes.length > 1 ? 's' : ''} ${missingScopes.join(' ')}`,
      403,
    )
  }
}

/** The server cannot take a new task now (busy, or shutting down); the client may retry. */
export class ServerUnavailableError extends A2AError {
  override name = 'ServerUnavailableError'
  constructor(message: string, httpStatus: 429 | 503) {
    super(ErrorCode.Internal, message, httpStatus)
  }
}

/** An agent tried to move a task that has already ended. */
export class TaskTerminalError extends Error {
  override name = 'TaskTerminalError'
  constructor(taskId: string, state: string, operation: string) {
    super(`Task ${taskId} is ${state}; ${operation}() cannot change it`)
  }
}

/**
 * The agent or server is set up in a way the runtime cannot honour (a card field, missing credentials, a
 * busy port). Raised at start-up, never for a request; the CLI prints its message without a stack.
 */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError'
}
