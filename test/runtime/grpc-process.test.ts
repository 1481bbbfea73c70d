import type { ChildProcess } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { makeAgentProject, runA2a, type StartedA2a, startA2a } from '../_support.ts'

/**
 * `a2a start` with A2A_GRPC_PORT, as a process on the built runtime: it serves gRPC beside HTTP (serveAgent starts it),
 * and where `@grpc/grpc-js` cannot be found it stops with one line saying what to install.
 */

const AGENT = `import { defineAgent } from 'a2a-runtime'
export default defineAgent({
  card: { name: 'gRPC Start', description: 'Served over gRPC too' },
  execute(ctx, task) {
    task.artifact(ctx.text)
    task.complete()
  },
})
`

/** A resolve hook that finds no `@grpc/grpc-js`, as in a project that did not install it. */
const HIDE_GRPC = `export async function resolve(specifier, context, next) {
  if (specifier === '@grpc/grpc-js' || specifier.startsWith('@grpc/grpc-js/')) {
    const error = new Error(\`Cannot find package '\${specifier}' imported from \${context.parentURL}\`)
    error.code = 'ERR_MODULE_NOT_FOUND'
    throw error
  }
  return next(specifier, context)
}
`

const running = new Set<ChildProcess>()
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const child of running) if (child.exitCode === null) process.kill(child.pid!, 'SIGKILL')
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))
})

describe('a2a start with A2A_GRPC_PORT', () => {
  it('serves gRPC beside HTTP, and the card lists it', async () => {
    const started: StartedA2a = await startA2a('a2a-grpc-start-', AGENT, {
      ...process.env,
      A2A_GRPC_PORT: '0',
    })
    cleanups.push(() => started.dispose())
    expect(started.output()).toMatch(/A2A v1\.0 over gRPC listening on 127\.0\.0\.1:\d+/)
    const card = await (await fetch(`${started.url}.well-known/agent-card.json`)).json()
    expect(card.supportedInterfaces.map((entry: { protocolBinding: string }) => entry.protocolBinding)).toContain(
      'GRPC',
    )
  })

  it('without @grpc/grpc-js stops with one line saying what to install', async () => {
    const project = makeAgentProject('a2a-grpc-missing-', AGENT)
    cleanups.push(() => rmSync(project, { recursive: true, force: true }))
    const hook = join(project, 'hide-grpc.mjs')
    writeFileSync(hook, HIDE_GRPC)
    const register = `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hook).href)})`
    const result = await runA2a(['start'], {
      cwd: project,
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        A2A_GRPC_PORT: '0',
        NODE_OPTIONS: `--import data:text/javascript,${encodeURIComponent(register)}`,
      },
      running,
    })
    expect(result.code).not.toBe(0)
    const output = result.stdout + result.stderr
    expect(output).toContain(
      'gRPC needs the packages @grpc/grpc-js and @bufbuild/protobuf, which are not installed: run `npm install @grpc/grpc-js @bufbuild/protobuf` in the project',
    )
    expect(output).not.toMatch(/^\s+at /m)
  })
})
