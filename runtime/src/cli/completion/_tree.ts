import type { Command } from 'commander'

/** One command of the tree as completion needs it: where it sits, what may follow it. */
export interface CompletionNode {
  /** The subcommand names from the root, space-separated (`''` for the root, `'task get'`). */
  path: string
  /** The names (and aliases) of its subcommands. */
  subcommands: string[]
  /** Its long options and those of the commands above it (commander reads a parent's options after a subcommand). */
  options: string[]
  /** The options (long and short) that take a value, with the values they accept when the choices are fixed. */
  valueOptions: Map<string, string[] | undefined>
  /** The fixed choices of its arguments (`a2a completion <shell>`). */
  argumentChoices: string[]
}

/** Every visible command of the program, with commander's own view of what is visible (no hidden ones). */
export function completionTree(program: Command): CompletionNode[] {
  const nodes: CompletionNode[] = []
  const visit = (command: Command, path: string[], inherited: CompletionNode | undefined) => {
    const help = command.createHelp()
    const visible = help.visibleOptions(command)
    // A parent's options but its --version, which only the program itself takes.
    const options = (inherited?.options ?? []).filter((flag) => flag !== '--version')
    const valueOptions = new Map(inherited?.valueOptions)
    for (const option of visible) {
      if (option.long && !options.includes(option.long)) options.push(option.long)
      if (option.required || option.optional)
        for (const flag of [option.long, option.short]) if (flag) valueOptions.set(flag, option.argChoices)
    }
    const subcommands = help.visibleCommands(command)
    const node: CompletionNode = {
      path: path.join(' '),
      subcommands: subcommands.flatMap((sub) => [sub.name(), ...sub.aliases()]),
      options,
      valueOptions,
      argumentChoices: command.registeredArguments.flatMap((argument) => argument.argChoices ?? []),
    }
    nodes.push(node)
    for (const sub of subcommands)
      if (sub.name() !== 'help' || sub.commands.length) visit(sub, [...path, sub.name()], node)
  }
  visit(program, [], undefined)
  return nodes
}
