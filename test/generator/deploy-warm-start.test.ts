import { type ChildProcess, execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { untilCardAnswers } from '../_served-project.ts'
import { freePort } from '../_support.ts'
import { type Built, buildLikeDocker, readDockerfile, startCmd } from './e2e-dockerfile.ts'

/**
 * A new container starts from the image's files alone (a scale from zero): whatever a start compiles, jiti's
 * TypeScript and V8's code, it compiles again unless the image holds it. The generated Dockerfile starts the agent
 * once at build; this builds a generated project's image into folders, on Node 24 as the image runs, with a folder
 * of its own as the image's temporary folder, and starts its CMD with that folder as a new container would.
 */

const bin = fileURLToPath(new URL('../../generator/bin/create-a2a-agent.mjs', import.meta.url))
const node24 = fileURLToPath(new URL('../../test-runtimes/node_modules/node24/bin/node', import.meta.url))
const exec = promisify(execFile)
const INSTALL_TIMEOUT = 180_000

let workspace: string
let imageTmp: string
let built: Built
const running = new Set<ChildProcess>()

/** The image's PATH: Node 24 first, as in node:24-slim. */
const imagePath = () => `${dirname(node24)}${delimiter}${process.env.PATH}`

beforeAll(async () => {
  workspace = mkdtempSync(join(realpathSync(tmpdir()), 'a2a-deploy-warm-'))
  imageTmp = join(workspace, 'image-tmp')
  mkdirSync(imageTmp)
  const { stdout } = await exec(process.execPath, [bin, 'warm', '--yes', '--pm', 'npm', '--no-git', '--json'], {
    cwd: workspace,
    timeout: INSTALL_TIMEOUT,
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
  })
  const project = JSON.parse(stdout.trim().split('\n').at(-1)!).dir as string
  const stages = readDockerfile(readFileSync(join(project, 'Dockerfile'), 'utf8'))
  // The final stage's steps on Node 24; the install stage's npm on this machine's Node (npm on that Node 24 waits
  // minutes on the network here), which installs the same files.
  const finalStage = `stage-${stages.length - 1}`
  built = await buildLikeDocker(project, stages, join(workspace, 'image'), async (command, cwd, env) => {
    const image = cwd.endsWith(finalStage) ? { PATH: imagePath(), TMPDIR: imageTmp } : {}
    await exec('/bin/sh', ['-c', command], {
      cwd,
      env: { ...env, ...image, npm_config_update_notifier: 'false' },
      timeout: INSTALL_TIMEOUT,
    })
  })
}, 2 * INSTALL_TIMEOUT)

afterAll(async () => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL')
  if (workspace) await rm(workspace, { recursive: true, force: true, maxRetries: 3 })
}, 120_000)

/** Every file under `dir` with its modification time, by path. */
function filesWithTimes(dir: string): Record<string, number> {
  const files: Record<string, number> = {}
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files[join(entry.parentPath, entry.name)] = statSync(join(entry.parentPath, entry.name)).mtimeMs
  }
  return files
}

it('the image holds what a start compiles, and its CMD reads it instead of compiling again', {
  timeout: 120_000,
}, async () => {
  const cached = filesWithTimes(imageTmp)
  const inFolder = (folder: string) => Object.keys(cached).filter((path) => path.startsWith(join(imageTmp, folder)))
  // jiti's compiled src/agent.ts, and V8's code of the modules the start loaded (Node's compile cache).
  expect(
    inFolder('jiti').some((path) => /agent/.test(path)),
    Object.keys(cached).join('\n'),
  ).toBe(true)
  expect(inFolder('node-compile-cache').length).toBeGreaterThan(10)

  const port = await freePort()
  const child = startCmd(built, { PORT: String(port), PATH: imagePath(), TMPDIR: imageTmp })
  running.add(child)
  const { exited } = await untilCardAnswers(child, `http://127.0.0.1:${port}/`, 'The CMD')
  process.kill(-child.pid!, 'SIGTERM')
  expect(await exited).toBe(0)
  running.delete(child)
  // Nothing compiled again: the start read every cache file the build left and wrote none.
  expect(filesWithTimes(imageTmp)).toEqual(cached)
})
