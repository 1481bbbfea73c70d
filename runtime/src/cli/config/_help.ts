import { createRequire } from 'node:module'
import type { Command, Help, Option } from 'commander'
import { isConfigurable } from './_configurable.js'
import { describeSource, type ResolveContext, resolveDeclared } from './_resolve.js'
import { shownValue } from './_shown.js'

// Required rather than imported, as main.ts does: Node scans an imported CommonJS package for its export names first.
const { Help: HelpClass } = createRequire(import.meta.url)('commander') as typeof import('commander')

/**
 * `--help` with the effective defaults: commander prints an option's built-in default (declared with `.default()`
 * or the third argument of `.option()`, never as `value ?? fallback` in code, which help cannot see), and this adds
 * the value the environment or a `.env` file sets in its place, and where from (a credential, and a service
 * parameter's values, as `[redacted]`).
 * Only for the commands that read configuration (`takesConfiguration`), and the program's own options.
 * Give it to `program.configureHelp()` before the commands are added: each command inherits it.
 */
export function effectiveDefaultsHelp(context: ResolveContext = {}): Partial<Help> {
  // The command whose options are being described: only those of a command that reads configuration have more.
  let described: Command | undefined
  return {
    visibleOptions(this: Help, command: Command): Option[] {
      described = command
      return HelpClass.prototype.visibleOptions.call(this, command)
    },
    optionDescription(this: Help, option: Option): string {
      const base = HelpClass.prototype.optionDescription.call(this, option)
      if (described === undefined || !isConfigurable(described)) return base
      let configured: ReturnType<typeof resolveDeclared>['options'][number] | undefined
      try {
        configured = resolveDeclared([{ option, given: false }], context).options[0]
      } catch {
        // A file help cannot read (or one refused) is the command's to report when it runs.
        return base
      }
      if (!configured || (configured.source.kind !== 'env' && configured.source.kind !== 'file')) return base
      const shown = shownValue(configured)
      // A secret whole is `[redacted]`, as config show prints it; a service parameter's keys stay, as JSON.
      const value = configured.credential && !Array.isArray(shown) ? '[redacted]' : JSON.stringify(shown)
      return `${base} (now ${value}, from ${describeSource(configured.source)})`
    },
  }
}
