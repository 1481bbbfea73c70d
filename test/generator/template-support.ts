import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

/** Generated projects without an install: the generator run as a process, offline, into a temporary folder. */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(repoRoot, 'generator/bin/create-a2a-agent.mjs')
const exec = promisify(execFile)

export function assertBuilt(): void {
  if (!existsSync(join(repoRoot, 'generator/dist/index.js')) || !existsSync(join(repoRoot, 'runtime/dist/index.js'))) {
    throw new Error('The generator and the runtime are not built: run `npm run build` first (the bin imports dist/).')
  }
}

/** A JSON file that may hold `//` comment lines (deno.json, wrangler.jsonc), parsed. */
export function parseJsonc(text: string): any {
  return JSON.parse(
    text
      .split('\n')
      .filter((line) => !line.trim().startsWith('//'))
      .join('\n'),
  )
}

export interface Workspace {
  /** Generates `dir` with `flags` (plus --yes, no install, no git) and returns the project's path. */
  generate(dir: string, flags?: string[]): Promise<string>
  read(project: string, path: string): string
  remove(): void
}

export function workspace(prefix: string): Workspace {
  const root = mkdtempSync(join(realpathSync(tmpdir()), prefix))
  return {
    async generate(dir, flags = []) {
      const { stdout } = await exec(
        process.execPath,
        [bin, dir, '--yes', '--no-install', '--no-git', '--json', '--pm', 'npm', ...flags],
        {
          cwd: root,
          timeout: 60_000,
          env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
        },
      )
      return (JSON.parse(stdout.trim().split('\n').at(-1)!) as { dir: string }).dir
    },
    read: (project, path) => readFileSync(join(project, path), 'utf8'),
    remove: () => rmSync(root, { recursive: true, force: true }),
  }
}
