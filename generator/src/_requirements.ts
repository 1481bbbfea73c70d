import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import type { PackageManager, ProjectOptions } from './options.js'

/** The oldest Node.js a project needs, who needs it, and the @types/node of that line. */
export interface NodeRequirement {
  version: string
  by: string
  types: string
}

const RUNTIME_BASE: NodeRequirement = { version: '20.19.0', by: 'a2a-runtime', types: '^20.19.0' }

/**
 * What the dependencies declare in their `engines` (npm warns, EBADENGINE, on an older Node): the AI SDK and
 * @langchain/openai need 22; @mastra/core 22.13 and its posthog-node 22.22 on the 22 line.
 */
const TEMPLATE_NODE: Partial<Record<ProjectOptions['template'], NodeRequirement>> = {
  'ai-sdk': { version: '22.0.0', by: 'the AI SDK', types: '^22.12.0' },
  mastra: { version: '22.22.0', by: 'Mastra', types: '^22.12.0' },
  langgraph: { version: '22.0.0', by: '@langchain/openai', types: '^22.12.0' },
}
const WRANGLER_NODE: NodeRequirement = { version: '22.12.0', by: 'wrangler', types: '^22.12.0' }

const newer = (a: string, b: string): boolean => {
  const [x, y] = [a, b].map((version) => version.split('.').map(Number))
  for (let i = 0; i < 3; i++) if (x![i] !== y![i]) return (x![i] ?? 0) > (y![i] ?? 0)
  return false
}

/** The Node.js the project's `engines` asks for: the newest its template and runtime need. */
export function nodeRequirement(options: Pick<ProjectOptions, 'template' | 'runtime'>): NodeRequirement {
  const needs = [
    RUNTIME_BASE,
    TEMPLATE_NODE[options.template],
    options.runtime === 'workers' ? WRANGLER_NODE : undefined,
  ]
  return needs.reduce<NodeRequirement>(
    (most, need) => (need && newer(need.version, most.version) ? need : most),
    RUNTIME_BASE,
  )
}

/** Whether `command` is an executable on PATH (PATHEXT's extensions on Windows). */
function onPath(command: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const extensions = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : ['']
  return (env.PATH ?? '').split(delimiter).some((folder) =>
    extensions.some((extension) => {
      try {
        accessSync(join(folder || '.', command + extension), constants.X_OK)
        return true
      } catch {
        return false
      }
    }),
  )
}

const addDevDependency = (pm: PackageManager, name: string): string =>
  pm === 'npm' ? `npm install --save-dev ${name}` : `${pm} add ${pm === 'bun' ? '-d' : '-D'} ${name}`

/**
 * What this machine lacks for the project, each in one line with what to do, said before anything is written or
 * installed: a Node.js older than the template or runtime needs, the Bun or Deno the project runs on.
 */
export function missingRequirements(
  options: ProjectOptions,
  env: NodeJS.ProcessEnv = process.env,
  node = process.versions.node,
): string[] {
  const problems: string[] = []
  // Deno runs a Deno project; Node only installs it.
  const need = nodeRequirement(options)
  if (options.runtime !== 'deno' && newer(need.version, node)) {
    problems.push(
      `Node.js ${node} is older than this project needs: ${need.by} needs Node.js ${need.version} or later (npm warns on install, and the agent may not start); install a newer Node.js (https://nodejs.org) and run the project with it.`,
    )
  }
  if (options.runtime === 'bun' && !onPath('bun', env)) {
    problems.push(
      `Bun is not installed (no bun on PATH), and this project runs on it: install it (https://bun.sh), or add it to the project with \`${addDevDependency(options.pm, 'bun')}\`.`,
    )
  }
  if (options.runtime === 'deno' && !onPath('deno', env)) {
    problems.push(
      `Deno is not installed (no deno on PATH), and this project's commands are deno tasks: install it (https://deno.com), or add it to the project with \`${addDevDependency(options.pm, 'deno')}\` and run them as \`npx deno task dev\`.`,
    )
  }
  return problems
}
