import type { Command } from 'commander'

const configurable = new WeakSet<Command>()

/**
 * Marks a command whose options the environment and `.env` files may set (it reads them with `resolveOptions`), so
 * `a2a config show` lists them. Commands that serve an agent (`a2a dev`, `a2a start`) read the project's own
 * settings instead, and stay out of the list. Options on the program itself are always listed.
 */
export function takesConfiguration<T extends Command>(command: T): T {
  configurable.add(command)
  return command
}

export function isConfigurable(command: Command): boolean {
  return command.parent === null || configurable.has(command)
}
