import { UsageError } from '../output/_failures.js'

/**
 * A flag's parser for a count (`--page-size`, `--history`): digits only, so `abc` or `-1` is a usage error naming
 * the flag rather than NaN sent to the agent. The environment's and files' values go through it too.
 */
export const wholeNumber =
  (flag: string) =>
  (text: string): number => {
    if (!/^\d{1,9}$/.test(text.trim())) throw new UsageError(`${flag}: '${text}' is not a whole number`)
    return Number(text.trim())
  }
