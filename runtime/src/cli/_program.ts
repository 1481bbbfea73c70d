import type { EventEmitter } from 'node:events'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Command as CommandType } from 'commander'
import { packageFile } from '../_package-root.js'
import { exitOnProjectFailure } from './_project-failure.js'
import { effectiveDefaultsHelp } from './config/_help.js'
import { configuredValue } from './config/_resolve.js'
import { UsageError } from './output/_failures.js'

// Required rather than imported: Node scans an imported CommonJS package for its export names first.
const { Command, CommanderError, Option } = createRequire(import.meta.url)('commander') as typeof import('commander')

type Register = (program: CommandType) => void

/** Each command's module, loaded only when it runs (or for help): `a2a start` skips the dev server and client. */
const COMMANDS: Record<string, () => Promise<Register>> = {
  dev: async () => (await import('../dev/_command.js')).registerDev,
  start: async () => (await import('./_start.js')).registerStart,
  store: async () => (await import('./commands/store.js')).registerStore,
  card: async () => (await import('./_card.js')).registerCard,
  send: async () => (await import('./commands/send.js')).registerSend,
  task: async () => (await import('./commands/task.js')).registerTask,
  chat: async () => (await import('./commands/chat.js')).registerChat,
  config: async () => (await import('./config/_command.js')).registerConfig,
  completion: async () => (await import('./completion/_command.js')).registerCompletion,
  conformance: async () => (await import('./conformance/_command.js')).registerConformance,
  auth: async () => (await import('./auth/_command.js')).registerAuth,
}

// From the package's root (_package-root.ts): the build bundles dist/, so no module counts on its own depth.
const { version } = JSON.parse(readFileSync(packageFile('package.json')!, 'utf8')) as { version: string }

/** The runtime's npm page (its README, which documents this command): what `--help` points to. */
const DOCS = 'https://www.npmjs.com/package/a2a-runtime'

/**
 * The `a2a` command on commander: every command, `--help` and the usage errors. Problems in the user's project print
 * one clear line; anything else keeps its stack.
 */
export async function runProgram(argv: string[]): Promise<void> {
  // A caller asking for JSON reads a usage error as the error envelope on stdout, not commander's text and help.
  const json = jsonAsked(argv)
  const program = new Command('a2a')
    .description('Run and check A2A agents')
    .version(version, '-v, --version', 'print the version')
    .addOption(new Option('-V').hideHelp())
    .showHelpAfterError(!json)
    .addHelpText('after', `\nDocumentation: ${DOCS}`)
    // Each option's default, and what the environment or a .env file sets in its place (the commands inherit it).
    .configureHelp(effectiveDefaultsHelp())
  // -V (commander's default) prints the version as -v and --version do: the same three flags as `create-a2a-agent`.
  // (A Command is an EventEmitter; its typings leave emit out.)
  program.on('option:V', () => (program as unknown as EventEmitter).emit('option:version'))
  // Usage errors (an unknown option, a missing argument) exit 2, as the A2A CLI specification has them; help and
  // version 0. Set before the commands are added, which inherit it.
  program.exitOverride((error) => {
    throw error.exitCode === 0 ? error : new CommanderError(2, error.code, error.message)
  })
  if (json) program.configureOutput({ outputError: () => {} })
  const requested = argv[2]
  // `config` lists every command's options and `completion` every command: they need the whole tree.
  const wholeTree = requested === 'config' || requested === 'completion'
  const names =
    requested !== undefined && Object.hasOwn(COMMANDS, requested) && !wholeTree ? [requested] : Object.keys(COMMANDS)
  for (const register of await Promise.all(names.map((name) => COMMANDS[name]!()))) register(program)
  try {
    await program.parseAsync(argv)
  } catch (error) {
    if (error instanceof CommanderError) {
      if (json && error.exitCode !== 0 && !HELP_CODES.has(error.code))
        process.exit(await usageEnvelope(new UsageError(error.message.replace(/^error: /, '')), json))
      process.exit(error.exitCode)
    }
    // A flag's own parser refusing its value (`--media-type` with no part before it): the error envelope, status 2.
    if (error instanceof UsageError) process.exit(await usageEnvelope(error, json))
    exitOnProjectFailure(error)
    throw error
  }
}

/** Commander's own help shown for a command given without its subcommand: help, not a usage error. */
const HELP_CODES = new Set(['commander.help', 'commander.helpDisplayed', 'commander.version'])

/** A usage error as the error envelope (stdout in json, stderr lines in text); its exit status, 2. */
async function usageEnvelope(error: UsageError, json: boolean): Promise<number> {
  // Loaded here: the output's renderers are the commands' own, and `a2a start` never needs them (a cold start
  // pays for every module it reads).
  const { createOutput } = await import('./output/_output.js')
  return createOutput({ format: json ? 'json' : 'text' }).error(error)
}

/**
 * Whether the output is JSON before the command line is parsed: the last `-o`/`--output` given (`-o json`,
 * `-ojson`, `--output json`, `--output=json`), else `--json`, else A2ACLI_OUTPUT.
 */
function jsonAsked(argv: string[]): boolean {
  let format: string | undefined
  argv.forEach((arg, at) => {
    if (arg === '-o' || arg === '--output') format = argv[at + 1]
    else if (arg.startsWith('--output=')) format = arg.slice('--output='.length)
    else if (/^-o[^-]/.test(arg)) format = arg.slice(2)
  })
  if (format !== undefined) return format === 'json'
  return argv.includes('--json') || configuredOutput() === 'json'
}

/** A2ACLI_OUTPUT as configured (environment or .env files); a file that cannot be read counts as none here. */
function configuredOutput(): string | undefined {
  try {
    return configuredValue('A2ACLI_OUTPUT')
  } catch {
    return undefined
  }
}
