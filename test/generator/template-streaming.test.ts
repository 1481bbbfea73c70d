import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type StartedA2a, startA2a } from '../_support.ts'
import { assertBuilt, type Workspace, workspace } from './template-support.ts'

/** The streaming template's agent, rendered by the generator and served by `a2a start`. */

let space: Workspace
let server: StartedA2a | undefined

beforeAll(() => {
  assertBuilt()
  space = workspace('a2a-template-streaming-')
})

afterAll(async () => {
  await server?.dispose()
  space.remove()
})

describe('streaming template', () => {
  it('answers a long message word by word without piling up abort listeners (no MaxListenersExceededWarning)', {
    timeout: 60_000,
  }, async () => {
    const project = await space.generate('long-talk', ['--template', 'streaming'])
    server = await startA2a('a2a-streaming-agent-', space.read(project, 'src/agent.ts'), {})
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`)
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: words.join(' ') }] } },
      }),
    })
    const { result } = (await response.json()) as {
      result: { status: { state: string }; artifacts: Array<{ parts: Array<{ text: string }> }> }
    }
    expect(result.status.state).toBe('completed')
    expect(result.artifacts[0]!.parts.map((part) => part.text).join('')).toBe(`Stream heard: ${words.join(' ')}`)

    // Everything the process printed is read once it has shut down and closed its output.
    const closed = new Promise((resolve) => server!.child.once('close', resolve))
    process.kill(server.child.pid!, 'SIGTERM')
    await closed
    expect(server.output()).toContain('shutting down')
    expect(server.output()).not.toMatch(/MaxListenersExceeded/)
  })
})
