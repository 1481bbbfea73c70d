import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root: the runtimes' binaries are named from it, and the agent processes run in it. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** A JavaScript runtime the behaviour suite serves its agent on. */
export interface JsRuntime {
  name: string
  /** The command that runs a .mjs file given after it: the binary first, then its arguments. */
  argv: string[]
  /**
   * The server `serveAgent` must pick on it: Node's `node:http`, or Bun's and Deno's native ones; `workerd`: the
   * agent runs as a Worker with its Durable Object (`agentWorker`), under `wrangler dev`, which `argv` runs.
   */
  server: 'node' | 'bun' | 'deno' | 'workerd'
  /** Added to the agent process's environment. */
  env?: Record<string, string>
}

const inRepo = (path: string) => join(REPO_ROOT, path)

export const RUNTIMES: JsRuntime[] = [
  // The Node that runs vitest: whatever the engines field allows as the oldest supported line.
  { name: `node ${process.versions.node.split('.')[0]}`, argv: [process.execPath], server: 'node' },
  { name: 'node 22', argv: [inRepo('test-runtimes/node_modules/node22/bin/node')], server: 'node' },
  { name: 'node 24', argv: [inRepo('test-runtimes/node_modules/node24/bin/node')], server: 'node' },
  { name: 'bun', argv: [inRepo('node_modules/.bin/bun')], server: 'bun' },
  // No update check: a test run makes no request beyond the agent on 127.0.0.1.
  {
    name: 'deno',
    argv: [inRepo('test-runtimes/node_modules/.bin/deno'), 'run', '-A'],
    server: 'deno',
    env: { DENO_NO_UPDATE_CHECK: '1' },
  },
  // Wrangler needs Node 22.12 or later: run on the Node 24 of test-runtimes/, whatever Node runs the tests.
  {
    name: 'workerd',
    argv: [
      inRepo('test-runtimes/node_modules/node24/bin/node'),
      inRepo('test-runtimes/node_modules/wrangler/bin/wrangler.js'),
    ],
    server: 'workerd',
    // No telemetry, and no request to workers.cloudflare.com for `request.cf` (a placeholder instead): a test run
    // makes no request beyond the agent on 127.0.0.1.
    env: { WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false' },
  },
]

/** Fails, never skips, when a runtime's binary is missing: the suite must run on all of them. */
export function assertInstalled(runtime: JsRuntime): void {
  // The paths in argv (the binary, wrangler's script); the rest are arguments.
  const binary = runtime.argv.filter((part) => part.includes('/')).find((path) => !existsSync(path))
  if (binary !== undefined) {
    throw new Error(
      `${runtime.name} is not installed (${binary} is missing): run \`npm install\` at the repository root (its postinstall installs test-runtimes/)`,
    )
  }
}
