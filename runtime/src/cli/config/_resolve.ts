import { resolve } from 'node:path'
import type { Command, Option } from 'commander'
import { UsageError } from '../output/_failures.js'
import { type ConfigFile, CREDENTIAL_VARIABLES, findLocalFile, globalFilePath, readConfigFile } from './_files.js'

/**
 * Where an option's value came from, highest first: a flag; an `A2ACLI_<LONG_FLAG>` environment variable; the local
 * `.env` (the nearest one up from the working directory, or the file `--config` names instead); the global
 * `$XDG_CONFIG_HOME/a2a-cli/.env` (else `~/.config/a2a-cli/.env`); the built-in default.
 */
export type OptionSource =
  | { kind: 'flag' }
  | { kind: 'env'; variable: string }
  | { kind: 'file'; path: string }
  | { kind: 'default' }

export interface ResolvedOption {
  /** commander's name for it, the key of `values` (`agentCard`). */
  attribute: string
  /** Its long flag (`--agent-card`). */
  flag: string
  /** The variable that sets it (`A2ACLI_AGENT_CARD`). */
  variable: string
  value: unknown
  source: OptionSource
  /** It holds a credential: shown only as `[redacted]`. */
  credential: boolean
  /** The environment or a file may set it (not `--stream`, `--help`, `--version`, a message's parts). */
  configurable: boolean
}

export interface ResolvedOptions {
  /** Each option's effective value by its commander name, as `command.opts()` would hold it. */
  values: Record<string, unknown>
  options: ResolvedOption[]
  /** The files read: the local one (or `--config`'s) and the global one, when they exist. */
  files: { local?: string; global?: string }
}

export interface ResolveContext {
  env?: NodeJS.ProcessEnv
  cwd?: string
}

/**
 * Never configured (besides hidden options, earlier spellings): what the invocation itself says. `--stream` is the caller's explicit choice of delivery;
 * `--help` and `--version` are actions; a message's parts (`--text`, `--file`, `--data`, `--media-type`) are
 * ordered content, not settings; `--config` names the file itself (a flag or A2ACLI_CONFIG, never a file).
 */
const NEVER_CONFIGURED = new Set(['--stream', '--help', '--version', '--text', '--file', '--data', '--media-type'])

/** `--agent-card` → `A2ACLI_AGENT_CARD`; a negation (`--no-wait`) is set by its positive flag's variable. */
function variableOf(option: Pick<Option, 'long' | 'negate'>): string | undefined {
  if (!option.long) return undefined
  const name = option.long.replace(/^--/, '').replace(option.negate ? /^no-/ : /^$/, '')
  return `A2ACLI_${name.toUpperCase().replaceAll('-', '_')}`
}

/** The source as `config show` prints it: `flag`, `env A2ACLI_X`, `file <path>`, `default`. */
export function describeSource(source: OptionSource): string {
  switch (source.kind) {
    case 'flag':
      return 'flag'
    case 'env':
      return `env ${source.variable}`
    case 'file':
      return `file ${source.path}`
    case 'default':
      return 'default'
  }
}

/**
 * The options of the command that runs (commander's `this` or the action's last argument) and of the commands
 * above it, each with its effective value and where that came from. A value from the environment or a file goes
 * through the option's own parser and choices, so `A2ACLI_OUTPUT=xml` is refused as `-o xml` would be.
 */
export function resolveOptions(command: Command, context: ResolveContext = {}): ResolvedOptions {
  const declared: DeclaredOption[] = []
  for (let current: Command | null = command; current; current = current.parent)
    for (const option of current.options) {
      const attribute = option.attributeName()
      const source = current.getOptionValueSource(attribute)
      declared.push({
        option,
        given: source === 'cli' || source === 'env' || source === 'implied' || source === 'config',
        value: current.getOptionValue(attribute),
      })
    }
  const resolved = resolveDeclared(declared, context)
  const env = context.env ?? process.env
  const config = resolved.values.config
  running = {
    // As it is now: a project's `.env` loaded into the process later (for its agent's credentials) is a file, and
    // never outranks the configuration files of the command.
    env: { ...env },
    cwd: context.cwd ?? process.cwd(),
    ...(typeof config === 'string' && config !== '' && { config }),
  }
  return resolved
}

/** The configuration of the command that runs, as its options were resolved: what `configuredValue` reads. */
let running: ConfiguredContext | undefined

/** Where `configuredValue` reads: an environment, a working folder, and the file `--config` names. */
export interface ConfiguredContext extends ResolveContext {
  /** The file `--config` names (else A2ACLI_CONFIG's, else the nearest `.env`). */
  config?: string
}

export interface DeclaredOption {
  option: Option
  /** A flag set it on this invocation. */
  given: boolean
  value?: unknown
}

/** Resolution over options listed innermost command first (the first declaration of a name wins). */
export function resolveDeclared(declared: readonly DeclaredOption[], context: ResolveContext = {}): ResolvedOptions {
  const env = context.env ?? process.env
  const cwd = context.cwd ?? process.cwd()
  const byAttribute = groupByAttribute(declared)
  const configFlag = byAttribute.get('config')?.find((entry) => entry.given)
  const local = localFile(configFlag?.value ?? nonEmpty(env.A2ACLI_CONFIG), cwd)
  const globalPath = globalFilePath(env)
  const global = local?.path === globalPath ? undefined : readConfigFile(globalPath)

  const values: Record<string, unknown> = {}
  const options: ResolvedOption[] = []
  for (const [attribute, entries] of byAttribute) {
    // The positive flag names the variable (`--wait` for `--wait` and `--no-wait`).
    const primary = entries.find((entry) => !entry.option.negate) ?? entries[0]!
    const variable = variableOf(primary.option)
    if (variable === undefined) continue
    const flag = primary.option.long!
    const given = entries.find((entry) => entry.given)
    // A hidden option is an earlier spelling of another: an alias never has a variable of its own.
    const configurable = !NEVER_CONFIGURED.has(flag) && attribute !== 'config' && !primary.option.hidden
    let resolved: { value: unknown; source: OptionSource }
    if (given) resolved = { value: given.value, source: { kind: 'flag' } }
    else if (attribute === 'config' && nonEmpty(env[variable]) !== undefined)
      resolved = { value: env[variable], source: { kind: 'env', variable } }
    else if (configurable) resolved = fromLayers(primary.option, variable, env, [local, global], defaultOf(entries))
    else resolved = { value: defaultOf(entries), source: { kind: 'default' } }
    values[attribute] = resolved.value
    options.push({
      attribute,
      flag,
      variable,
      ...resolved,
      credential: CREDENTIAL_VARIABLES.has(variable),
      configurable: configurable || attribute === 'config',
    })
  }
  return { values, options, files: { local: local?.path, global: global?.path } }
}

function groupByAttribute(declared: readonly DeclaredOption[]): Map<string, DeclaredOption[]> {
  const groups = new Map<string, DeclaredOption[]>()
  for (const entry of declared) {
    const attribute = entry.option.attributeName()
    const group = groups.get(attribute) ?? []
    // An inner command's declaration of a long flag hides an outer one's.
    if (!group.some((other) => other.option.long === entry.option.long)) group.push(entry)
    groups.set(attribute, group)
  }
  return groups
}

/**
 * One `A2ACLI_*` variable as configured, for code that reads it outside a command's options (a token's refresh, a
 * default agent): the environment, then the local `.env` (or the file `--config` or A2ACLI_CONFIG names), then the
 * global file. With no context given, the command's own as `resolveOptions` found it: its `--config`, and the
 * environment as it was then.
 */
export function configuredValue(variable: string, context?: ConfiguredContext): string | undefined {
  const where = context ?? running ?? {}
  const env = where.env ?? process.env
  const fromEnv = nonEmpty(env[variable])
  if (fromEnv !== undefined) return fromEnv
  const local = localFile(where.config ?? nonEmpty(env.A2ACLI_CONFIG), where.cwd ?? process.cwd())
  const globalPath = globalFilePath(env)
  const global = local?.path === globalPath ? undefined : readConfigFile(globalPath)
  for (const file of [local, global]) {
    const value = nonEmpty(file?.values.get(variable))
    if (value !== undefined) return value
  }
  return undefined
}

function localFile(configPath: unknown, cwd: string): ConfigFile | undefined {
  if (typeof configPath === 'string' && configPath !== '') {
    const path = resolve(cwd, configPath)
    const file = readConfigFile(path)
    if (!file) throw new UsageError(`--config: no file at ${path}`)
    return file
  }
  const found = findLocalFile(cwd)
  return found === undefined ? undefined : readConfigFile(found)
}

function fromLayers(
  option: Option,
  variable: string,
  env: NodeJS.ProcessEnv,
  files: readonly (ConfigFile | undefined)[],
  builtIn: unknown,
): { value: unknown; source: OptionSource } {
  const fromEnv = nonEmpty(env[variable])
  if (fromEnv !== undefined) return { value: parseValue(option, fromEnv, variable), source: { kind: 'env', variable } }
  for (const file of files) {
    const raw = nonEmpty(file?.values.get(variable))
    if (raw !== undefined)
      return {
        value: parseValue(option, raw, `${variable} in ${file!.path}`),
        source: { kind: 'file', path: file!.path },
      }
  }
  return { value: builtIn, source: { kind: 'default' } }
}

/** The built-in default: the positive flag's; a lone `--no-x` means x is on unless given (as commander has it). */
function defaultOf(entries: readonly DeclaredOption[]): unknown {
  const positive = entries.find((entry) => !entry.option.negate)
  if (positive) return positive.option.defaultValue
  return entries[0]!.option.defaultValue ?? true
}

const nonEmpty = (value: string | undefined) => (value === undefined || value === '' ? undefined : value)

const TRUE = new Set(['true', '1', 'yes', 'on'])
const FALSE = new Set(['false', '0', 'no', 'off'])

/** A configured string as the flag would have given it: a switch from true/false, a list from commas. */
function parseValue(option: Option, raw: string, where: string): unknown {
  if (!option.required && !option.optional) {
    const word = raw.trim().toLowerCase()
    const on = TRUE.has(word) ? true : FALSE.has(word) ? false : undefined
    if (on === undefined) throw new UsageError(`${where}: '${raw}' is not true or false`)
    // The variable is the positive flag's, for `--no-wait` as for `--wait`: A2ACLI_WAIT=false means no wait.
    return on
  }
  const items = isRepeatable(option) ? raw.split(',').map((item) => item.trim()) : [raw]
  let value: unknown = option.defaultValue
  for (const item of items) {
    if (option.argChoices && !option.argChoices.includes(item))
      throw new UsageError(`${where}: '${item}' is not one of ${option.argChoices.join(', ')}`)
    try {
      if (option.parseArg) value = option.parseArg(item, value)
      else if (option.variadic)
        value = value === option.defaultValue || !Array.isArray(value) ? [item] : [...value, item]
      else value = item
    } catch (error) {
      throw new UsageError(`${where}: ${(error as Error).message}`)
    }
  }
  return value
}

/**
 * A repeatable option lists its values separated by commas: a variadic one, one with an array default, or one whose
 * parser collects into an array (`(value, previous = []) => [...previous, value]`), found by asking it.
 */
function isRepeatable(option: Option): boolean {
  if (option.variadic || Array.isArray(option.defaultValue)) return true
  if (!option.parseArg) return false
  try {
    return Array.isArray(option.parseArg('', undefined))
  } catch {
    return false
  }
}
