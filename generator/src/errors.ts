// The generator's errors that reach the user: printed as one clear line (with the usage for a UsageError), never a
// stack.

/** A usage problem the user can fix by changing what they typed; printed without a stack. */
export class UsageError extends Error {
  override name = 'UsageError'
  constructor(
    message: string,
    /** 2 for a missing or malformed argument, 1 for a refusal (a busy directory). */
    readonly exitCode = 2,
  ) {
    super(message)
  }
}

/** Thrown part-way through writing: says what is already on disk. */
export class WriteError extends Error {
  constructor(
    readonly written: string[],
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause })
  }
}
