import { ConfigurationError } from '../errors.js'
import { ProjectError } from './_errors.js'

/**
 * A problem in the user's project (a missing module, a bad setting) ends the command with its one line and status 1;
 * anything else is left to the caller, which lets it out with its stack.
 */
export function exitOnProjectFailure(error: unknown): void {
  if (error instanceof ProjectError || error instanceof ConfigurationError) {
    console.error(`a2a: ${error.message}`)
    process.exit(1)
  }
}
