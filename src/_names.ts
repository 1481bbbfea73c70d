import validatePackageName from 'validate-npm-package-name'

/** A usage problem the user can fix by changing what they typed; printed without a stack. */
export class UsageError extends Error {
  override name = 'UsageError'
  constructor(
    message: string,
    /** 2 for a missing or malformed argument, 1 for a refusal (a busy directory). */
    readonly exitCode = 2,
  ) {
    super(message)
  }
}

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

/** Throws a UsageError naming every reason npm would refuse `name`. */
export function assertPackageName(name: string): void {
  const result = validatePackageName(name)
  if (result.validForNewPackages) return
  const reasons = [...(result.errors ?? []), ...(result.warnings ?? [])]
  throw new UsageError(`Invalid package name ${JSON.stringify(name)}: ${reasons.join('; ')}`)
}

/** "weather-bot" → "Weather Bot": the display name a directory suggests. */
export function toDisplayName(packageName: string): string {
  const base = packageName.split('/').pop() ?? packageName
  const words = base.split(/[-_.\s]+/).filter(Boolean)
  return words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join(' ') || 'My Agent'
}

const SKILL_ID = /^[a-z][a-z0-9_-]{0,63}$/i

export function assertSkillId(id: string): void {
  if (!SKILL_ID.test(id)) {
    throw new UsageError(`Invalid skill id ${JSON.stringify(id)}: use a letter, then letters, digits, "-" or "_" (at most 64)`)
  }
}
