import { readFileSync } from 'node:fs'
import { Command, CommanderError } from 'commander'
import { ConfigurationError } from '../errors.js'
import { ProjectError } from './_load-agent.js'
import { registerCard } from './_card.js'
import { registerDev } from './_dev.js'
import { registerSend } from './_send.js'
import { registerStart } from './_start.js'

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }

/** The `a2a` command. Problems in the user's project print one clear line; anything else keeps its stack. */
export async function main(argv = process.argv): Promise<void> {
  const program = new Command('a2a').description('Run and check A2A agents').version(version).showHelpAfterError()
  registerDev(program)
  registerStart(program)
  registerCard(program)
  registerSend(program)
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
