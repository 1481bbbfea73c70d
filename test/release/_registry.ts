import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../_support.ts'

/**
 * A private npm registry for the release tests: Verdaccio on a free port of 127.0.0.1, its storage in `dir`,
 * serving what is published to it and proxying everything else to the registry this machine is configured
 * with (so a project's other dependencies install as they would for a user).
 */

const verdaccioBin = fileURLToPath(new URL('../../node_modules/verdaccio/bin/verdaccio', import.meta.url))
/** Starting it, a first request through the uplink: generous, since a loaded 2-core machine slows everything. */
const SLOW = 60_000

export interface Registry {
  /** e.g. `http://127.0.0.1:41234/` */
  url: string
  /** An npmrc that publishes to the registry (it holds the publisher's token). */
  publisherNpmrc: string
  /** Everything Verdaccio printed. */
  output(): string
  /** SIGTERM by PID, then the exit. */
  stop(): Promise<void>
}

export async function startRegistry(dir: string, ownPackages: string[]): Promise<Registry> {
  const uplink = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim()
  const ours = ownPackages.map((name) => `  '${name}':\n    access: $all\n    publish: $authenticated\n`).join('')
  const config = join(dir, 'verdaccio.yaml')
  mkdirSync(join(dir, 'storage'), { recursive: true })
  writeFileSync(
    config,
    [
      `storage: ${JSON.stringify(join(dir, 'storage'))}`,
      'auth:',
      `  htpasswd: { file: ${JSON.stringify(join(dir, 'htpasswd'))}, max_users: 1 }`,
      'uplinks:',
      `  upstream: { url: ${JSON.stringify(uplink)}, timeout: 120s }`,
      'packages:',
      // Our packages exist only here: a name nobody published upstream, or someone else's, can never be mixed in.
      ours.trimEnd(),
      "  '**': { access: $all, proxy: upstream }",
      'web: { enable: false }',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  )
  const port = await freePort()
  const url = `http://127.0.0.1:${port}/`
  const child: ChildProcess = spawn(
    process.execPath,
    [verdaccioBin, '--config', config, '--listen', `127.0.0.1:${port}`],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGTERM')
    await exited
  }
  try {
    for (const deadline = Date.now() + SLOW; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
      if (child.exitCode !== null) throw new Error(`Verdaccio exited with ${child.exitCode}:\n${output}`)
      if (Date.now() > deadline) throw new Error(`Verdaccio did not answer within ${SLOW / 1000} s:\n${output}`)
      if (
        await fetch(`${url}-/ping`).then(
          (response) => response.ok,
          () => false,
        )
      )
        break
    }
    // The publisher: an account made through the registry's npm API, whose token goes in an npmrc of its own.
    const response = await fetch(`${url}-/user/org.couchdb.user:release`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'release', password: `release-${crypto.randomUUID()}` }),
    })
    const { token } = (await response.json()) as { token?: string }
    if (!response.ok || !token) throw new Error(`The registry made no publisher account (HTTP ${response.status})`)
    const publisherNpmrc = join(dir, 'publisher.npmrc')
    writeFileSync(publisherNpmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`)
    return { url, publisherNpmrc, output: () => output, stop }
  } catch (error) {
    await stop()
    throw error
  }
}
