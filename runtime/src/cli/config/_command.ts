import type { Command } from 'commander'
import { createOutput } from '../output/_output.js'
import { createTextWriter } from '../output/_text-writer.js'
import { isConfigurable, takesConfiguration } from './_configurable.js'
import { type DeclaredOption, describeSource, resolveDeclared } from './_resolve.js'
import { shownValue } from './_shown.js'

/**
 * `a2a config show`: every setting's effective value and where it came from, credentials as `[redacted]`. It reads
 * and never writes: configuration lives in the environment and in `.env` files the user edits.
 */
export function registerConfig(program: Command, io: ConfigIo = {}): void {
  const config = program.command('config').description('Inspect the configuration of the client commands')
  takesConfiguration(config.command('show'))
    .description("Print every setting's effective value and its source: flag, env, file or default (read-only)")
    .option('-o, --output <format>', 'text or json', 'text')
    .option('--config <path>', 'read this .env file in place of the local one')
    .action((_flags: unknown, command: Command) => {
      process.exitCode = show(command, io)
    })
}

/** Where `config show` reads and writes: the process's own unless a test gives others. */
export interface ConfigIo {
  stdout?: { write(text: string): unknown }
  stderr?: { write(text: string): unknown }
  env?: NodeJS.ProcessEnv
  cwd?: string
}

function show(command: Command, io: ConfigIo): number {
  const stdout = io.stdout ?? process.stdout
  const root = rootOf(command)
  const declared: DeclaredOption[] = []
  for (let current: Command | null = command; current; current = current.parent)
    for (const option of current.options) {
      const attribute = option.attributeName()
      const source = current.getOptionValueSource(attribute)
      declared.push({ option, given: source === 'cli', value: current.getOptionValue(attribute) })
    }
  // The options of every command that reads configuration, as they would resolve with no flag given.
  for (const other of commandsOf(root))
    if (isConfigurable(other))
      for (const option of other.options) if (!option.hidden) declared.push({ option, given: false })
  const flagFormat = command.getOptionValue('output') === 'json' ? 'json' : 'text'
  try {
    const resolved = resolveDeclared(declared, { env: io.env, cwd: io.cwd })
    const format = resolved.values.output === 'json' ? 'json' : 'text'
    const options = resolved.options
      .filter((option) => option.configurable)
      .sort((a, b) => a.variable.localeCompare(b.variable))
    const files = { local: resolved.files.local ?? null, global: resolved.files.global ?? null }
    if (format === 'json') {
      const shown = options.map((option) => ({
        option: option.flag,
        variable: option.variable,
        value: shownValue(option) ?? null,
        source: describeSource(option.source),
      }))
      stdout.write(`${JSON.stringify({ files, options: shown })}\n`)
      return 0
    }
    const writer = createTextWriter((text) => stdout.write(text))
    writer.field('Local file', files.local ?? '(none)')
    writer.field('Global file', files.global ?? '(none)')
    writer.separate()
    for (const option of options) {
      writer.field('Option', option.flag)
      writer.field('Variable', option.variable)
      writer.field('Value', shownText(shownValue(option)) ?? '(not set)')
      writer.field('Source', describeSource(option.source))
      writer.separate()
    }
    return 0
  } catch (error) {
    return createOutput({ format: flagFormat, stdout, stderr: io.stderr }).error(error)
  }
}

/** A shown value on one text line: a list with commas. */
function shownText(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (Array.isArray(value)) return value.map(String).join(',')
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}

function rootOf(command: Command): Command {
  let root = command
  while (root.parent) root = root.parent
  return root
}

function* commandsOf(command: Command): Generator<Command> {
  for (const sub of command.commands) {
    yield sub
    yield* commandsOf(sub)
  }
}
