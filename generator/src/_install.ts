import { execa } from 'execa'
import type { PackageManager, ProjectOptions } from './options.js'

/**
 * The lockfiles package managers write: the first commit holds the one installing made, so `npm ci` works from a clone.
 */
export const LOCKFILES = [
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'bun.lock',
  'bun.lockb',
]

/** How `pm` runs a package.json script: `npm run dev`, `pnpm dev`. */
const scriptCommand = (pm: PackageManager, script: string): string =>
  pm === 'npm' ? `npm run ${script}` : `${pm} ${script}`

/**
 * How a project runs one of its scripts: a Deno project's are tasks of its deno.json (`deno task dev`), every
 * other project's are package.json scripts run by its package manager.
 */
export const projectCommand = (options: Pick<ProjectOptions, 'pm' | 'runtime'>, script: string): string =>
  options.runtime === 'deno' ? `deno task ${script}` : scriptCommand(options.pm, script)

/** The one command that installs a project's dependencies with `pm`. */
export function installCommand(pm: PackageManager): string[] {
  return pm === 'yarn' ? ['yarn'] : [pm, 'install']
}

export interface InstallOutcome {
  /** Why it failed; undefined when it worked. */
  error?: string
  /** Stopped by Ctrl-C (SIGINT). */
  interrupted?: boolean
}

/**
 * Installs in one call. Failing or interrupted, the project is kept and the outcome says so; output goes to
 * `stdio` so `--json` keeps stdout clean. Ctrl-C reaches the package manager from the terminal (and is passed
 * on when sent to us alone); we outlive it to say how to finish.
 */
export async function install(dir: string, pm: PackageManager, stdio: 'inherit' | 'stderr'): Promise<InstallOutcome> {
  const [command, ...args] = installCommand(pm)
  let interrupted = false
  let child: ReturnType<typeof execa> | undefined
  const onInterrupt = () => {
    interrupted = true
    child?.kill('SIGINT')
  }
  process.on('SIGINT', onInterrupt)
  child = execa(command!, args, {
    cwd: dir,
    stdout: stdio === 'inherit' ? 'inherit' : process.stderr,
    stderr: 'inherit',
    stdin: 'ignore',
  })
  try {
    await child
    process.off('SIGINT', onInterrupt)
    return {}
  } catch (error) {
    const failure = error as {
      code?: string
      signal?: string
      exitCode?: number
      shortMessage?: string
      message: string
    }
    if (interrupted || failure.signal === 'SIGINT' || failure.exitCode === 130) {
      // Kept a moment: the Ctrl-C that stopped the package manager may reach this process after its exit was heard,
      // and with no listener of ours execa's exit hook would re-raise it, ending the process before it says how to
      // finish. Not for ever: a later Ctrl-C (run as a library) must stop the process again.
      setTimeout(() => process.off('SIGINT', onInterrupt), 1000).unref()
      return { interrupted: true, error: 'interrupted' }
    }
    process.off('SIGINT', onInterrupt)
    return {
      error: failure.code === 'ENOENT' ? `${command} is not installed` : (failure.shortMessage ?? failure.message),
    }
  }
}
