import type { EventEmitter } from 'node:events'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Command as CommandType } from 'commander'
import { ConfigurationError } from '../errors.js'
import { ProjectError } from './_errors.js'

// Required rather than imported: Node scans an imported CommonJS package for its export names first.
const { Command, CommanderError, Option } = createRequire(import.meta.url)('commander') as typeof import('commander')

type Register = (program: CommandType) => void

/** Each command's module, loaded only when it runs (or for help): `a2a start` skips the dev server and client. */
const COMMANDS: Record<string, () => Promise<Register>> = {
  dev: async () => (await import('../dev/_command.js')).registerDev,
  start: async () => (await import('./_start.js')).registerStart,
  card: async () => (await import('./_card.js')).registerCard,
  send: async () => (await import('./_send.js')).registerSend,
}

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string
}

/** The runtime's npm page (its README, which documents this command): what `--help` points to. */
const DOCS = 'https://www.npmjs.com/package/a2a-runtime'

/** The `a2a` command. Problems in the user's project print one clear line; anything else keeps its stack. */
export async function main(argv = process.argv): Promise<void> {
  const program = new Command('a2a')
    .description('Run and check A2A agents')
    .version(version, '-v, --version', 'print the version')
    .addOption(new Option('-V').hideHelp())
    .showHelpAfterError()
    .addHelpText('after', `\nDocumentation: ${DOCS}`)
  // -V (commander's default) prints the version as -v and --version do: the same three flags as `create-a2a-agent`.
  // (A Command is an EventEmitter; its typings leave emit out.)
  program.on('option:V', () => (program as unknown as EventEmitter).emit('option:version'))
  const requested = argv[2]
  const names = requested !== undefined && Object.hasOwn(COMMANDS, requested) ? [requested] : Object.keys(COMMANDS)
  for (const register of await Promise.all(names.map((name) => COMMANDS[name]!()))) register(program)
  try {
    await program.parseAsync(argv)
  } catch (error) {
    if (error instanceof CommanderError) process.exit(error.exitCode)
    if (error instanceof ProjectError || error instanceof ConfigurationError) {
      console.error(`a2a: ${(error as Error).message}`)
      process.exit(1)
    }
    throw error
  }
}
