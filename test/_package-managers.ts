import { mkdirSync, realpathSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The package managers a user may create and install a project with besides npm, as this repository's devDependencies
 * bring them.
 */
export const OTHER_PACKAGE_MANAGERS = ['pnpm', 'yarn', 'bun'] as const

const rootBin = fileURLToPath(new URL('../node_modules/.bin', import.meta.url))
const COMMANDS = ['pnpm', 'pnpx', 'yarn', 'yarnpkg', 'bun', 'bunx']

/**
 * A folder with pnpm, yarn and bun (and their `x` runners) linked in, to put first on a child's PATH. Only
 * these: the rest of the repository's `node_modules/.bin` (tsc, vitest, a2a…) stays off PATH, so a project
 * under test runs its own.
 */
export function packageManagersOnPath(dir: string): string {
  mkdirSync(dir, { recursive: true })
  for (const command of COMMANDS) symlinkSync(realpathSync(join(rootBin, command)), join(dir, command))
  return dir
}
