import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Part } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { sdkTestAgent } from '../_sdk-v1.ts'
import {
  a2a,
  commandsAgent,
  emptyFolder,
  expectNoStack,
  field,
  oneDocument,
  startRuntimeAgent,
} from './_agent-commands.ts'

/**
 * A message's parts as `a2a send` builds them from its flags (--text, --file, --data, each followed by an optional
 * --media-type), seen where they arrive: in the agent. And `--debug`, which shows the exchange but never a credential.
 */

async function recordingAgent(binding: string) {
  const received: Part[][] = []
  const url = await startRuntimeAgent(
    commandsAgent({ streaming: true, onMessage: (parts) => received.push(structuredClone(parts)) }),
  )
  const folder = emptyFolder()
  const send = (args: string[], stdin?: string) =>
    a2a(['send', '-a', url, '--transport', binding, ...args], {
      cwd: folder,
      ...(stdin !== undefined && { stdin: { text: stdin } }),
    })
  return { received, folder, send }
}

describe.each(['JSONRPC', 'HTTP+JSON'])('a2a send parts (over %s)', (binding) => {
  it('--text a --file f.pdf --media-type application/pdf --data - arrive in that order, with those types', async () => {
    const { received, folder, send } = await recordingAgent(binding)
    // No extension: the type is the one given, not guessed.
    writeFileSync(join(folder, 'f.bin'), '%PDF-1.4 small')
    const { code } = await send(
      ['--text', 'a', '--file', 'f.bin', '--media-type', 'application/pdf', '--data', '-'],
      '{"rows":[1,2]}',
    )
    expect(code).toBe(0)
    expect(received).toHaveLength(1)
    expect(received[0]).toEqual([
      { kind: 'text', text: 'a' },
      {
        kind: 'file',
        file: { name: 'f.bin', mimeType: 'application/pdf', bytes: Buffer.from('%PDF-1.4 small').toString('base64') },
      },
      { kind: 'data', data: { rows: [1, 2] } },
    ])
  })

  it('the words given as arguments come first as one text part; a type is guessed from the extension only', async () => {
    const { received, folder, send } = await recordingAgent(binding)
    writeFileSync(join(folder, 'notes.md'), '# Notes')
    writeFileSync(join(folder, 'rows.json'), '[1, 2, 3]')
    const { code } = await send(['hello', 'there', '--file', 'notes.md', '--data', 'rows.json', '--text', 'end'])
    expect(code).toBe(0)
    expect(received[0]).toEqual([
      { kind: 'text', text: 'hello there' },
      {
        kind: 'file',
        file: { name: 'notes.md', mimeType: 'text/markdown', bytes: Buffer.from('# Notes').toString('base64') },
      },
      { kind: 'data', data: [1, 2, 3] },
      { kind: 'text', text: 'end' },
    ])
  })

  it('--file <url> sends a reference the agent fetches, never the content', async () => {
    const { received, send } = await recordingAgent(binding)
    const { code } = await send(['--file', 'http://127.0.0.1:9/reports/q3.pdf'])
    expect(code).toBe(0)
    expect(received[0]).toEqual([
      { kind: 'file', file: { name: 'q3.pdf', mimeType: 'application/pdf', uri: 'http://127.0.0.1:9/reports/q3.pdf' } },
    ])
  })
})

describe('a2a send parts the agent does not take', () => {
  it("a type outside the card's input modes: ContentTypeNotSupportedError, exit 1, a hint naming --media-type", async () => {
    const { received, folder, send } = await recordingAgent('JSONRPC')
    writeFileSync(join(folder, 'photo.png'), 'png')
    const { code, stdout } = await send(['--file', 'photo.png', '-o', 'json'])
    expect(code).toBe(1)
    const { error } = oneDocument(stdout)
    expect(error.code).toBe('ContentTypeNotSupportedError')
    expect(error.hint).toContain('--media-type')
    expect(received).toEqual([])
  })
})

describe('a2a send parts refused before anything is sent', () => {
  it.each([
    [['--media-type', 'application/pdf', '--text', 'a'], /--media-type sets the type of the part before it/],
    [['--text', 'a', '--media-type', 'pdf'], /--media-type: 'pdf' is not a media type/],
    [['--file', 'missing.pdf'], /--file missing.pdf: ENOENT/],
    [['--data', '-'], /--data \(stdin\) is not JSON/],
    [[], /nothing to send/],
  ])('%j: the usage envelope, exit 2, and the agent gets nothing', async (args, message) => {
    const { received, send } = await recordingAgent('JSONRPC')
    const json = await send([...args, '-o', 'json'], 'not json')
    expect(json.code).toBe(2)
    const { error } = oneDocument(json.stdout)
    expect(error.code).toBe('A2ACLI_ERR_USAGE')
    expect(error.message).toMatch(message)
    const text = await send(args, 'not json')
    expect(text.code).toBe(2)
    expect(text.stdout).toBe('')
    expect(text.stderr).toMatch(/^Code: A2ACLI_ERR_USAGE$/m)
    expectNoStack(text.stderr)
    expect(received).toEqual([])
  })
})

describe('a2a send --debug', () => {
  it('shows each request and answer on stderr, never the bearer token nor the API key', async () => {
    const BEARER = 'bearer-secret-4b7c1d'
    const KEY = 'api-key-secret-93e2aa'
    const url = await startRuntimeAgent(
      sdkTestAgent({
        name: 'Guarded',
        description: 'Takes a bearer token or an API key',
        capabilities: { streaming: true },
        authentication: { schemes: ['bearer', 'apiKey'] },
      }),
      { auth: { bearerTokens: [BEARER], apiKeys: [KEY] } },
    )
    for (const credential of [
      ['--bearer', BEARER],
      ['--api-key', KEY],
    ]) {
      const { code, stdout, stderr } = await a2a(['send', '-a', url, 'hello', '--debug', ...credential])
      expect(code).toBe(0)
      expect(field(stdout, 'State')).toBe('COMPLETED')
      expect(stderr).toMatch(/^debug: → POST /m)
      expect(stderr).toMatch(/^debug: ← 200 /m)
      expect(stderr).toMatch(/^debug: ← event/m)
      expect(stderr).toContain('[redacted]')
      expect(stderr).not.toContain(BEARER)
      expect(stderr).not.toContain(KEY)
      expect(stdout).not.toContain(credential[1])
    }
  })
})
