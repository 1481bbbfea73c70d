import { type Env, wholeNumberSetting } from '../settings.js'

/**
 * The port `a2a start` and `a2a dev` listen on: `--port`, else PORT, else 3000. Anything but a whole number
 * from 0 to 65535 stops the command with the line the other settings use, naming what was given as given.
 */
export function portSetting(flag: string | undefined, env: Env): number {
  // The flag is checked as text, as the variable is: `--port abc` says "abc", not NaN.
  const source: Env = flag === undefined ? env : { PORT: flag }
  return wholeNumberSetting({
    option: '--port',
    variable: 'PORT',
    given: undefined,
    env: source,
    fallback: 3000,
    min: 0,
    max: 65535,
  })
}
