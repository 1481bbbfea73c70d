// biome-ignore-all assist/source/organizeImports: grouped by what a reader looks for, not by path
// The command
export { equivalentCommand, run } from './cli.js'
export type { CliIo } from './cli.js'

// Options and their rules
export { DEFAULT_SKILLS, RUNTIMES, TEMPLATES, detectPackageManager, parseSkill, resolveOptions } from './options.js'
export type { Answers, AuthMode, PackageManager, ProjectOptions, RuntimeName, Skill, TemplateName } from './options.js'
export { UsageError } from './errors.js'
export { toDisplayName, toPackageName, toWorkerName } from './names.js'

// Rendering
export { markdown, shellWord, tsString } from './escape.js'
export { renderProject } from './render.js'
export type { RenderedFile } from './render.js'
