import { afterEach, expect, it } from 'vitest'
import { type A2aOnProject, a2aOnProject, freePort } from '../_support.ts'
import { rawRequest } from '../runtime/_raw-request.ts'

/** `a2a dev` serves through listhen's server, not serveAgent's: its answers carry reason phrases too. */

let dev: A2aOnProject | undefined
afterEach(async () => {
  await dev?.dispose()
  dev = undefined
})

it('a2a dev answers 401 Unauthorized, not a bare 401', async () => {
  const port = await freePort()
  dev = a2aOnProject(
    'a2a-reason-phrase-',
    `import { defineAgent } from 'a2a-runtime'
export default defineAgent({
  card: { name: 'Guarded', description: 'Needs a token', authentication: { schemes: ['bearer'] } },
  execute: (_ctx, task) => task.complete(),
})
`,
    ['dev'],
    { PORT: String(port), A2A_BEARER_TOKEN: 'dev-token' },
  )
  await expect.poll(() => dev!.output.all, { timeout: 15_000 }).toContain('Dev server at')
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: { message: { parts: [{ kind: 'text', text: 'hi' }] } },
  })
  const request = `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
  expect(await rawRequest(port, request)).toBe('HTTP/1.1 401 Unauthorized')
})
