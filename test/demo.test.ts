import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

const demo = fileURLToPath(new URL('../examples/demo.mjs', import.meta.url))

it("runs the README's main job: the example agent answers message/send and message/stream", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [demo, '--once'], { env: { ...process.env, PORT: '0', HOST: '127.0.0.1' }, timeout: 10_000 })
  expect(stdout).toMatch(/name: 'Echo Agent'/)
  expect(stdout).toMatch(/state: 'completed'/)
  expect(stdout).toMatch(/text: 'hello from the demo'|text: 'hello'/)
  const frames = stdout.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)))
  expect(frames[0].params.status.state).toBe('working')
  expect(frames.at(-1).params.status.state).toBe('completed')
  const streamed = frames.filter((f) => f.method === 'tasks/artifactUpdate').map((f) => f.params.artifact.parts[0].text).join('')
  expect(streamed).toBe('streams arrive word by word')
})
