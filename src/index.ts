// biome-ignore-all assist/source/organizeImports: grouped by what a reader looks for, not by path
// The command
export { equivalentCommand, run } from './_cli.js'
export type { CliIo } from './_cli.js'

// Options and their rules
export { DEFAULT_SKILLS, TEMPLATES, detectPackageManager, parseSkill, resolveOptions } from './_options.js'
export type { Answers, AuthMode, PackageManager, ProjectOptions, Skill, TemplateName } from './_options.js'
export { UsageError } from './_errors.js'
export { toDisplayName, toPackageName } from './_names.js'

// Rendering
export { markdown, shellWord, tsString } from './_escape.js'
export { renderProject } from './_render.js'
export type { RenderedFile } from './_render.js'
