import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  a2a,
  commandsAgent,
  emptyFolder,
  expectNoStack,
  field,
  oneDocument,
  startRuntimeAgent,
  startSdkAgent,
} from './_agent-commands.ts'

/** `a2a card get`: an agent's card read from a host, a card URL or a file; `--validate`; `-o json` the card itself. */

describe('a2a card get', () => {
  it('reads the card from the host, the card URL and a file alike', async () => {
    const url = await startRuntimeAgent(commandsAgent({ streaming: true }))
    const cardUrl = `${url}.well-known/agent-card.json`
    const folder = emptyFolder()
    writeFileSync(join(folder, 'card.json'), await (await fetch(cardUrl)).text())
    for (const reference of [url, cardUrl, 'card.json', `file://${join(folder, 'card.json')}`]) {
      const { code, stdout } = await a2a(['card', 'get', '-a', reference], { cwd: folder })
      expect(code, reference).toBe(0)
      expect(field(stdout, 'Agent')).toBe('Commands Fixture')
      expect(field(stdout, 'Streaming')).toBe('yes')
      expect(field(stdout, 'Push notifications')).toBe('yes')
      expect(stdout).toMatch(new RegExp(`^Interface: JSONRPC 1\\.0 ${url}$`, 'm'))
      expect(stdout).toMatch(/^Interface: HTTP\+JSON 1\.0 /m)
      expect(field(stdout, 'Skill')).toBe('echo (Echo)')
    }
  })

  it('-o json prints the card as the agent serves it, one document', async () => {
    const url = await startRuntimeAgent(commandsAgent({ streaming: true }))
    // As served to a v1.0 client (the runtime leaves the v0.3 fields out for one).
    const served = await (
      await fetch(`${url}.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })
    ).json()
    const { code, stdout } = await a2a(['card', 'get', '-a', url, '-o', 'json'])
    expect(code).toBe(0)
    expect(oneDocument(stdout)).toEqual(served)
  })

  it('--validate passes a good card (warnings on stderr) and exits 0', async () => {
    const url = await startRuntimeAgent(commandsAgent({ streaming: true }))
    const { code, stdout } = await a2a(['card', 'get', '-a', url, '--validate'])
    expect(code).toBe(0)
    expect(field(stdout, 'Agent')).toBe('Commands Fixture')
  })

  it('--validate on a broken card file exits 1 naming the field', async () => {
    const url = await startRuntimeAgent(commandsAgent({ streaming: true }))
    const card = await (await fetch(`${url}.well-known/agent-card.json`)).json()
    card.capabilities.streaming = 'yes'
    const folder = emptyFolder()
    writeFileSync(join(folder, 'broken.json'), JSON.stringify(card))
    const json = await a2a(['card', 'get', '-a', 'broken.json', '--validate', '-o', 'json'], { cwd: folder })
    expect(json.code).toBe(1)
    const { error } = oneDocument(json.stdout)
    expect(error.code).toBe('A2ACLI_ERR_CARD_INVALID')
    expect(error.message).toContain('capabilities.streaming')
    const text = await a2a(['card', 'get', '-a', 'broken.json', '--validate'], { cwd: folder })
    expect(text.code).toBe(1)
    expect(text.stdout).toBe('')
    expect(text.stderr).toMatch(/^Error: .*capabilities\.streaming/m)
    expectNoStack(text.stderr)
  })

  it('a card file that is not JSON, and one that is missing, each one error and no stack', async () => {
    const folder = emptyFolder()
    writeFileSync(join(folder, 'garbled.json'), '{ not json')
    const garbled = await a2a(['card', 'get', '-a', 'garbled.json', '-o', 'json'], { cwd: folder })
    expect(garbled.code).toBe(1)
    expect(oneDocument(garbled.stdout).error.code).toBe('A2ACLI_ERR_CARD_INVALID')
    const missing = await a2a(['card', 'get', '-a', 'missing.json'], { cwd: folder })
    expect(missing.code).toBe(3)
    expect(missing.stderr).toMatch(/^Code: A2ACLI_ERR_CARD_NOT_FOUND$/m)
    expectNoStack(missing.stderr)
  })

  it('--extended of a card that declares no extended card: UnsupportedOperationError with no binding code', async () => {
    const url = await startRuntimeAgent(commandsAgent({ streaming: true }))
    const { code, stdout, stderr } = await a2a(['card', 'get', '--extended', '-a', url, '-o', 'json', '--debug'])
    expect(oneDocument(stdout).error).toMatchObject({ code: 'UnsupportedOperationError', a2aCode: null })
    expect(code).toBe(1)
    // Not asked: the card said so.
    expect(stderr).not.toMatch(/^debug: → POST/m)
  })

  it("reads the official SDK server's card, listing its interfaces in its order", async () => {
    const sdk = await startSdkAgent({ bindings: ['HTTP+JSON', 'JSONRPC'] })
    const { code, stdout } = await a2a(['card', 'get', '-a', sdk.url])
    expect(code).toBe(0)
    expect(field(stdout, 'Agent')).toBe('SDK v1 Echo')
    expect(stdout.match(/^Interface: .*$/gm)).toEqual([
      `Interface: HTTP+JSON 1.0 ${sdk.restUrl}`,
      `Interface: JSONRPC 1.0 ${sdk.jsonRpcUrl}`,
    ])
  })
})
