import type { Command } from 'commander'
import { completionScript, SHELLS, type Shell } from './_scripts.js'
import { completionTree } from './_tree.js'

/** `a2a completion bash|zsh|fish`: the shell's completion script, generated from the commands as they stand. */
export function registerCompletion(program: Command): void {
  const command = program
    .command('completion')
    .description('Print a shell completion script (bash: source <(a2a completion bash))')
  command.addArgument(command.createArgument('<shell>', 'bash, zsh or fish').choices(SHELLS)).action((shell: Shell) => {
    process.stdout.write(completionScript(shell, completionTree(program), program.name()))
  })
}
