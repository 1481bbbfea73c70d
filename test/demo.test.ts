import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'
import { freePort } from './_support.ts'

const demo = fileURLToPath(new URL('../examples/demo.mjs', import.meta.url))


it("runs the README's main job: a generated agent, installed and started, answers message/send and message/stream", { timeout: 180_000 }, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [demo, '--once'], { env: { ...process.env, PORT: String(await freePort()), HOST: '127.0.0.1' }, timeout: 170_000 })
  expect(stdout).toMatch(/create-a2a-agent .* --template streaming --yes/)
  expect(stdout).toMatch(/name: 'Demo Agent'/)
  expect(stdout).toMatch(/state: 'completed'/)
  const frames = stdout.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)))
  expect(frames[0].params.status.state).toBe('working')
  expect(frames.at(-1).params.status.state).toBe('completed')
  const streamed = frames.filter((f) => f.method === 'tasks/artifactUpdate').map((f) => f.params.artifact.parts[0].text).join('')
  expect(streamed).toBe('Stream heard: streams arrive word by word')
})
