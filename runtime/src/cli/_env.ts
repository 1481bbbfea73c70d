import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { parseEnv } from 'node:util'

/**
 * Loads `<dir>/.env` into `process.env` when it exists. Variables already set win, so the shell and the
 * process manager override the file. Returns the path loaded, if any.
 */
export function loadDotEnv(dir: string): string | undefined {
  const path = join(dir, '.env')
  if (!isFile(path)) return undefined
  process.loadEnvFile(path)
  return path
}

/**
 * Sets PORT and HOST (those given) to where the server listens, so the project's own code finds it there (a team's
 * planner calling its writer), whatever the flags, a busy port or `.env` said.
 */
export function announceListening(address: { PORT?: string; HOST?: string }): void {
  for (const [name, value] of Object.entries(address)) if (value !== undefined) process.env[name] = value
}

/**
 * `.env` for a long-running dev server: each reload applies the file's current values, removes the ones
 * deleted from it, and never touches a variable the environment set before the server started.
 */
export function createEnvReloader(dir: string): { reload(): string[] } {
  const path = join(dir, '.env')
  const fromShell = new Set(Object.keys(process.env))
  let applied = new Map<string, string>()
  return {
    /** Applies the file again; returns the names whose value changed. */
    reload() {
      // A .env that is not a file (a folder, a dangling link) counts as none.
      const parsed = isFile(path) ? parseEnv(readFileSync(path, 'utf8')) : {}
      const next = new Map(
        Object.entries(parsed).filter(
          (entry): entry is [string, string] => entry[1] !== undefined && !fromShell.has(entry[0]),
        ),
      )
      const changed: string[] = []
      for (const key of applied.keys()) {
        if (!next.has(key)) {
          delete process.env[key]
          changed.push(key)
        }
      }
      for (const [key, value] of next) {
        if (process.env[key] !== value) changed.push(key)
        process.env[key] = value
      }
      applied = next
      return changed
    },
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/**
 * `--insecure`: Node's fetch stops checking TLS certificates for this process (the command is a process of its own,
 * so nothing else is affected).
 */
export function skipTlsChecks(): void {
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'
}
