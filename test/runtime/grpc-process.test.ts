import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { v1Message } from '../_sdk-v1.ts'
import { a2aBin, makeAgentProject, runA2a, type StartedA2a, startA2a } from '../_support.ts'
import { grpcClient } from './_grpc.ts'

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
    const answer: any = await (await grpcClient(started.url)).sendMessage(v1Message('over gRPC'))
    expect(answer.artifacts[0].parts[0].content.value).toBe('over gRPC')
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

describe('a2a dev with A2A_GRPC_PORT', () => {
  it('serves gRPC once the agent loads (the client finds it through the card), the new code after a save', async () => {
    const project = makeAgentProject('a2a-grpc-dev-', AGENT)
    cleanups.push(() => rmSync(project, { recursive: true, force: true }))
    const child = spawn(process.execPath, [a2aBin, 'dev'], {
      cwd: project,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', A2A_GRPC_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    running.add(child)
    let output = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    await expect.poll(() => output, { timeout: 20_000 }).toMatch(/A2A v1\.0 over gRPC listening on 127\.0\.0\.1:\d+/)
    await expect.poll(() => output, { timeout: 20_000 }).toMatch(/Dev server at (http:\/\/\S+\/)/)
    const url = /Dev server at (http:\/\/\S+\/)/.exec(output)![1]!
    const client = await grpcClient(url)
    const first: any = await client.sendMessage(v1Message('before'))
    expect(first.artifacts[0].parts[0].content.value).toBe('before')

    // A save swaps the agent inside the same app: gRPC answers with the new code, on the same port.
    writeFileSync(
      join(project, 'src/agent.ts'),
      AGENT.replace('task.artifact(ctx.text)', 'task.artifact(`v2 ${ctx.text}`)'),
    )
    await expect.poll(() => output.match(/Loaded src\/agent\.ts/g)?.length ?? 0, { timeout: 20_000 }).toBe(2)
    const second: any = await client.sendMessage(v1Message('after'))
    expect(second.artifacts[0].parts[0].content.value).toBe('v2 after')
  })
})
