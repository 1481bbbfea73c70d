import { readFileSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { parseEnv } from 'node:util'
import { UsageError } from '../output/_failures.js'
import { shellWord } from '../output/_sanitize.js'

/**
 * The variables that hold a credential (shown only redacted; a file holding one must be readable by its owner alone):
 * the caller's, the secrets of a webhook the agent is asked to call, and service parameters, which may carry one.
 */
export const CREDENTIAL_VARIABLES: ReadonlySet<string> = new Set([
  'A2ACLI_BEARER',
  'A2ACLI_API_KEY',
  'A2ACLI_CLIENT_SECRET',
  'A2ACLI_WEBHOOK_TOKEN',
  'A2ACLI_AUTH_CREDENTIALS',
  'A2ACLI_SVC_PARAM',
])

/** The `A2ACLI_*` settings of one `.env` file (a project's `.env` also holds the agent's own settings: skipped). */
export interface ConfigFile {
  path: string
  values: ReadonlyMap<string, string>
}

/** The nearest `.env` file from `cwd` up to the file system's root, as git finds its repository. */
export function findLocalFile(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const candidate = join(dir, '.env')
    if (isFile(candidate)) return candidate
    if (dirname(dir) === dir) return undefined
  }
}

/** `$XDG_CONFIG_HOME/a2a-cli/.env` (an absolute XDG_CONFIG_HOME, as the XDG spec asks), else `~/.config/a2a-cli/.env`. */
export function globalFilePath(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config')
  return join(base, 'a2a-cli', '.env')
}

/**
 * Reads the `A2ACLI_*` keys of a dotenv file (node:util's parseEnv, as `a2a dev` reads a project's `.env`).
 * Absent: undefined. A file holding a credential that others than its owner may read is refused: secrets never sit
 * in files others can read.
 */
export function readConfigFile(path: string): ConfigFile | undefined {
  let text: string
  try {
    if (!statSync(path).isFile()) return undefined
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new UsageError(`cannot read the configuration file ${path}: ${(error as Error).message}`)
  }
  const values = new Map<string, string>()
  for (const [key, value] of Object.entries(parseEnv(text)))
    if (key.startsWith('A2ACLI_') && value !== undefined) values.set(key, value)
  const credential = [...values].find(([key, value]) => CREDENTIAL_VARIABLES.has(key) && value !== '')?.[0]
  if (credential !== undefined && process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) {
    const fix = `chmod 600 ${shellWord(path)}`
    throw new UsageError(`${path} holds ${credential} and others can read it: run ${fix}`, fix)
  }
  return { path, values }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}
