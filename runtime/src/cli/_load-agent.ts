import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createJiti } from 'jiti'
import type { Agent } from '../agent.js'

export const DEFAULT_ENTRY = 'src/agent.ts'

/** A problem the user can fix in their project; printed without a stack. */
export class ProjectError extends Error {
  override name = 'ProjectError'
}

/**
 * Imports the project's agent module (TypeScript runs without a build step) and returns its default export,
 * which must come from `defineAgent()`.
 */
export async function loadAgent(cwd: string, entry = DEFAULT_ENTRY): Promise<{ agent: Agent; path: string }> {
  const path = resolve(cwd, entry)
  if (!existsSync(path)) throw new ProjectError(`Cannot find the agent module ${entry} in ${cwd} (pass its path as an argument)`)
  const jiti = createJiti(pathToFileURL(path).href, { fsCache: true, moduleCache: false })
  const module = (await jiti.import(path)) as { default?: unknown }
  const agent = module.default
  if (!isAgent(agent)) throw new ProjectError(`${entry} must \`export default defineAgent({ ... })\``)
  return { agent, path }
}

function isAgent(value: unknown): value is Agent {
  return typeof value === 'object' && value !== null && (value as { __a2aAgent?: unknown }).__a2aAgent === true
}
