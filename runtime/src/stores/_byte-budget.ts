import { type Env, type Variable, wholeNumberSetting } from '../settings.js'

/** A store's budget in bytes: the option when given, else the environment variable, else the default. */
export function readByteBudget(
  given: number | undefined,
  option: string,
  variable: Variable,
  fallback: number,
  env: Env,
): number {
  return wholeNumberSetting({
    option,
    variable,
    given,
    env,
    fallback,
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    unit: 'bytes',
  })
}
