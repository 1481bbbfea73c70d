import { execa } from 'execa'
import type { PackageManager } from './_options.js'

/** How `pm` runs a package.json script: `npm run dev`, `pnpm dev`. */
export const scriptCommand = (pm: PackageManager, script: string): string => (pm === 'npm' ? `npm run ${script}` : `${pm} ${script}`)

/** The one command that installs a project's dependencies with `pm`. */
export function installCommand(pm: PackageManager): string[] {
  return pm === 'yarn' ? ['yarn'] : [pm, 'install']
}

/**
 * Installs in one call. Returns the error message when it fails (the project is kept); output goes to
 * `stdio` so `--json` keeps stdout clean.
 */
export async function install(dir: string, pm: PackageManager, stdio: 'inherit' | 'stderr'): Promise<string | undefined> {
  const [command, ...args] = installCommand(pm)
  try {
    await execa(command!, args, { cwd: dir, stdout: stdio === 'inherit' ? 'inherit' : process.stderr, stderr: 'inherit', stdin: 'ignore' })
    return undefined
  } catch (error) {
    const failure = error as { code?: string; shortMessage?: string; message: string }
    return failure.code === 'ENOENT' ? `${command} is not installed` : (failure.shortMessage ?? failure.message)
  }
}
