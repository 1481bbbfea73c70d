import { ProjectError } from '../cli/_errors.js'
import { AgentLoadError } from '../cli/_load-agent.js'
import { ConfigurationError } from '../errors.js'
import { describeLoadFailure } from './_load-failure.js'

/**
 * Why `entry` did not load, in the one line the console, the inspector and the JSON-RPC error show, and the failing
 * line with its caret for the console alone ('' when unknown).
 */
export function loadFailureText(error: unknown, entry: string, cwd: string): { text: string; frame: string } {
  const text =
    error instanceof AgentLoadError
      ? error.summary
      : error instanceof ProjectError
        ? error.message
        : error instanceof ConfigurationError
          ? `${entry}: ${error.message}`
          : describeLoadFailure(error, cwd)
  return { text, frame: error instanceof AgentLoadError && error.frame ? `\n${error.frame}` : '' }
}
