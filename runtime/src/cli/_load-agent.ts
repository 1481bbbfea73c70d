import { existsSync, readdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, extname, join, resolve, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Agent } from '../agent.js'
import { type CompiledModule, requireFromCodeCache } from './_code-cache.js'
import { ProjectError } from './_errors.js'

const require = createRequire(import.meta.url)
// jiti is CommonJS: imported from ESM, Node first scans its 190 KB for export names (about 50 ms of every
// `a2a start`); required, it loads in a third of the time.
let jitiModule: typeof import('jiti') | undefined
/** jiti's core (dist/jiti.cjs, which its entry requires) from V8's code cache on Node 20; kept once an agent loaded. */
let jitiCompiled: CompiledModule | undefined
const loadJiti = (): typeof import('jiti') => {
  if (jitiModule) return jitiModule
  jitiCompiled = requireFromCodeCache(join(dirname(require.resolve('jiti')), '../dist/jiti.cjs'))
  jitiModule = require('jiti') as typeof import('jiti')
  return jitiModule
}

export const DEFAULT_ENTRY = 'src/agent.ts'
/** The folder of agents served when the project has no `src/agent.ts`: each module one agent, at its name. */
const DEFAULT_AGENTS_FOLDER = 'src/agents'

/** How `a2a dev` and `a2a start` take another module; `a2a card validate` says `--entry` instead. */
const HOW_TO_NAME_ENTRY = 'pass its path as an argument'

/** The one line every command prints outside a project (no agent module where it looks). */
export function assertEntryExists(cwd: string, entry: string, howToName = HOW_TO_NAME_ENTRY): void {
  if (!existsSync(resolve(cwd, entry)))
    throw new ProjectError(`Cannot find the agent module ${entry} in ${cwd} (${howToName})`)
}

/**
 * What `a2a dev` and `a2a start` serve: the entry given (a module, or a folder of agents), else `src/agent.ts`, else
 * the folder `src/agents/` when the project has one. A project with neither is told about `src/agent.ts`.
 */
export function chooseEntry(cwd: string, given: string | undefined): { entry: string; folder: boolean } {
  const isFolder = (path: string) => {
    try {
      return statSync(resolve(cwd, path)).isDirectory()
    } catch {
      return false
    }
  }
  if (given !== undefined) return { entry: given, folder: isFolder(given) }
  if (!existsSync(resolve(cwd, DEFAULT_ENTRY)) && isFolder(DEFAULT_AGENTS_FOLDER))
    return { entry: DEFAULT_AGENTS_FOLDER, folder: true }
  return { entry: DEFAULT_ENTRY, folder: false }
}

/** Code a folder of agents may hold: tests and declarations are not agents. */
const AGENT_MODULE = /^[^.].*\.(?:[cm]?[jt]s|tsx)$/
const NOT_AN_AGENT = /\.(?:test|spec)\.[^.]+$|\.d\.[cm]?ts$/

/**
 * The modules of a folder of agents, by agent name (the file's name without its extension), sorted by name; two modules
 * of one name (`writer.js`, `writer.ts`) are refused in one line naming both.
 */
export function agentModules(cwd: string, folder: string): Map<string, string> {
  const modules = new Map<string, string>()
  const names = readdirSync(resolve(cwd, folder), { withFileTypes: true })
    .filter((entry) => entry.isFile() && AGENT_MODULE.test(entry.name) && !NOT_AN_AGENT.test(entry.name))
    .map((entry) => entry.name)
    .sort()
  for (const file of names) {
    const name = agentNameOf(file)
    const other = modules.get(name)
    // writer.js beside writer.ts: one path, two modules; serving either would hide the other without a word.
    if (other !== undefined)
      throw new ProjectError(
        `${other} and ${join(folder, file)} would both be the agent ${name} (/${name}/): keep one of them in ${folder}/`,
      )
    modules.set(name, join(folder, file))
  }
  return modules
}

/** `src/agents/writer.ts` → `writer`. */
const agentNameOf = (file: string): string => basename(file, extname(file))

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
 * Imports the project's agent module (TypeScript runs without a build step) and returns its agent: the default
 * export, else the one named `agent`, which must come from `defineAgent()`.
 */
export async function loadAgent(
  cwd: string,
  entry = DEFAULT_ENTRY,
  howToName = HOW_TO_NAME_ENTRY,
): Promise<{ agent: Agent; path: string }> {
  const { agent, path } = await importAgent(cwd, entry, howToName)
  if (!agent) throw new ProjectError(`${entry} must \`export default defineAgent({ ... })\``)
  return { agent, path }
}

/** As `loadAgent`, but a module that loads and exports no agent answers none (a folder of agents' helper). */
export async function importAgent(
  cwd: string,
  entry: string,
  howToName = HOW_TO_NAME_ENTRY,
): Promise<{ agent: Agent | undefined; path: string }> {
  const path = resolve(cwd, entry)
  assertEntryExists(cwd, entry, howToName)
  forgetProjectModules(cwd)
  const jiti = loadJiti().createJiti(pathToFileURL(path).href, { fsCache: true, moduleCache: false })
  let module: { default?: unknown; agent?: unknown }
  try {
    module = (await jiti.import(path)) as { default?: unknown; agent?: unknown }
  } catch (error) {
    // Where and why, in one line ("src/agent.ts:4:2 ParseError: Unexpected token"), and the line itself; loaded
    // only for a module that fails, as a start that loads pays for every module it reads.
    const { explainLoadFailure } = await import('../dev/_load-failure.js')
    const { summary, frame } = explainLoadFailure(error, cwd)
    throw new AgentLoadError(summary, frame)
  }
  jitiCompiled?.save()
  jitiCompiled = undefined
  const agent = isAgent(module.default) ? module.default : isAgent(module.agent) ? module.agent : undefined
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
