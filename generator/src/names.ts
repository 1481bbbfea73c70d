import validatePackageName from 'validate-npm-package-name'
import { UsageError } from './errors.js'

/** "Weather Bot!" → "weather-bot": what an npm package name made from a display name looks like. */
export function toPackageName(input: string): string {
  return input
    .trim()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/^[._]+/, '')
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-+|-+$/g, '')
}

/** Every reason npm would refuse `name` as a new package's name, in one line; undefined when it is fine. */
export function packageNameProblem(name: string): string | undefined {
  const result = validatePackageName(name)
  if (result.validForNewPackages) return undefined
  const reasons = [...(result.errors ?? []), ...(result.warnings ?? [])]
  return `Invalid package name ${JSON.stringify(name)}: ${reasons.join('; ')}`
}

/** The package name when nothing of the directory's name can make one ("天气机器人", "!!!"). */
export const FALLBACK_PACKAGE_NAME = 'agent'

/**
 * The package name a directory's name suggests: converted ("Weather Bot" → "weather-bot"), or
 * `agent` when no character of it is one a package name can hold. `problem` says why npm would refuse it.
 */
export function packageNameFromDir(dirName: string): { name: string; fallback: boolean; problem?: string } {
  const converted = toPackageName(dirName)
  const name = converted || FALLBACK_PACKAGE_NAME
  const problem = packageNameProblem(name)
  return { name, fallback: !converted, ...(problem ? { problem } : {}) }
}

/** "weather-bot" → "Weather Bot": the display name a directory suggests. */
export function toDisplayName(packageName: string): string {
  const base = packageName.split('/').pop() ?? packageName
  const words = base.split(/[-_.\s]+/).filter(Boolean)
  return words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join(' ') || 'My Agent'
}

/**
 * "@acme/weather_bot.v2" → "weather-bot-v2": the name of the Worker a package deploys as. Cloudflare takes lowercase
 * letters, digits and dashes, at most 63, neither first nor last a dash.
 */
export function toWorkerName(packageName: string): string {
  const base = (packageName.split('/').pop() ?? packageName)
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .slice(0, 63)
    .replace(/^-+|-+$/g, '')
  return base || FALLBACK_PACKAGE_NAME
}

const SKILL_ID = /^[a-z][a-z0-9_-]{0,63}$/i

export function assertSkillId(id: string): void {
  if (!SKILL_ID.test(id)) {
    throw new UsageError(
      `Invalid skill id ${JSON.stringify(id)}: use a letter, then letters, digits, "-" or "_" (at most 64)`,
    )
  }
}

/**
 * The name a platform gives the deployed service (a Cloud Run service, a Kubernetes Deployment, a Fly app): the
 * Worker's name, starting with a letter and at most 49 characters, Cloud Run's limit and the strictest of them.
 */
export function toServiceName(packageName: string): string {
  const worker = toWorkerName(packageName)
  return (/^[a-z]/.test(worker) ? worker : `a-${worker}`).slice(0, 49).replace(/-+$/, '')
}

/** AgentCore's runtime name: a letter, then letters, digits and underscores, at most 48. */
export function toAgentRuntimeName(packageName: string): string {
  return toServiceName(packageName).replace(/-/g, '_').slice(0, 48)
}
