import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { resolve, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Agent } from '../agent.js'
import { ProjectError } from './_errors.js'

const require = createRequire(import.meta.url)
// jiti is CommonJS: imported from ESM, Node first scans its 190 KB for export names (about 50 ms of every
// `a2a start`); required, it loads in a third of the time.
let jitiModule: typeof import('jiti') | undefined
const loadJiti = (): typeof import('jiti') => (jitiModule ??= require('jiti') as typeof import('jiti'))

export const DEFAULT_ENTRY = 'src/agent.ts'

/** How `a2a dev` and `a2a start` take another module; `a2a card validate` says `--entry` instead. */
const HOW_TO_NAME_ENTRY = 'pass its path as an argument'

/** The one line every command prints outside a project (no agent module where it looks). */
export function assertEntryExists(cwd: string, entry: string, howToName = HOW_TO_NAME_ENTRY): void {
  if (!existsSync(resolve(cwd, entry)))
    throw new ProjectError(`Cannot find the agent module ${entry} in ${cwd} (${howToName})`)
}

/**
 * A module that does not load: `summary` is the one line that names the place and the cause, `frame` the failing
 * line with a caret under the column ('' when unknown); the message is both, as `a2a start` prints it.
 */
export class AgentLoadError extends ProjectError {
  constructor(
    readonly summary: string,
    readonly frame: string,
  ) {
    super(frame ? `${summary}\n${frame}` : summary)
  }
}

/**
 * Imports the project's agent module (TypeScript runs without a build step) and returns its default export,
 * which must come from `defineAgent()`.
 */
export async function loadAgent(
  cwd: string,
  entry = DEFAULT_ENTRY,
  howToName = HOW_TO_NAME_ENTRY,
): Promise<{ agent: Agent; path: string }> {
  const path = resolve(cwd, entry)
  assertEntryExists(cwd, entry, howToName)
  forgetProjectModules(cwd)
  const jiti = loadJiti().createJiti(pathToFileURL(path).href, { fsCache: true, moduleCache: false })
  let module: { default?: unknown }
  try {
    module = (await jiti.import(path)) as { default?: unknown }
  } catch (error) {
    // Where and why, in one line ("src/agent.ts:4:2 ParseError: Unexpected token"), and the line itself; loaded
    // only for a module that fails, as a start that loads pays for every module it reads.
    const { explainLoadFailure } = await import('../dev/_load-failure.js')
    const { summary, frame } = explainLoadFailure(error, cwd)
    throw new AgentLoadError(summary, frame)
  }
  const agent = module.default
  if (!isAgent(agent)) throw new ProjectError(`${entry} must \`export default defineAgent({ ... })\``)
  return { agent, path }
}

/**
 * jiti re-evaluates TypeScript and ESM on every import here, but loads `.json` and `.cjs` through Node's
 * require, whose cache outlives a reload: drop the project's own entries so an edited data file is read again.
 */
function forgetProjectModules(cwd: string): void {
  const cache = require.cache
  for (const file of Object.keys(cache)) {
    if (file.startsWith(cwd) && !file.includes(`${sep}node_modules${sep}`)) delete cache[file]
  }
}

function isAgent(value: unknown): value is Agent {
  return typeof value === 'object' && value !== null && (value as { __a2aAgent?: unknown }).__a2aAgent === true
}
