import { givenSetting, numberSetting } from '../_number-setting.js'
import { ConfigurationError } from '../errors.js'

/**
 * A budget in bytes: the option when given, else the environment variable, else the default. A value that is
 * not a whole number from 1 up names the option, its variable and what it got.
 */
export function readByteBudget(option: number | undefined, name: string, env: string, fallback: number): number {
  const value = numberSetting(option, env) ?? fallback
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigurationError(`${name} (${env}) must be a whole number of bytes from 1 to ${Number.MAX_SAFE_INTEGER} (got ${givenSetting(option, env)})`)
  }
  return value
}
