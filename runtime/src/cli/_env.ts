import { existsSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Loads `<dir>/.env` into `process.env` when it exists. Variables already set win, so the shell and the
 * process manager override the file. Returns the path loaded, if any.
 */
export function loadDotEnv(dir: string): string | undefined {
  const path = join(dir, '.env')
  if (!existsSync(path)) return undefined
  process.loadEnvFile(path)
  return path
}
