import type { ChildProcess } from 'node:child_process'
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateAgentCardSignature } from '@a2a-js/sdk'
import { calculateJwkThumbprint, type JWK } from 'jose'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type CommandResult, makeAgentProject, runA2a, type StartedA2a, startA2a } from '../_support.ts'

/** The environment without anything that would change which card or address the CLI sees. */
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_)/.test(key)),
) as Record<string, string>

const AGENT = `import { defineAgent } from 'a2a-runtime'
export default defineAgent({
  card: {
    name: 'Signed Weather',
    description: 'Tells the weather for any city, with a signed card',
    skills: [{ id: 'forecast', name: 'Forecast', description: 'The forecast for a city', tags: ['weather'], examples: ['Weather in Oslo?'] }],
  },
  execute(ctx, task) {
    task.artifact('sunny')
    task.complete()
  },
})
`

interface SignatureCheck {
  path: string
  outcome: string
  alg?: string
  kid?: string
  key?: { kid?: string; thumbprint: string }
  covers?: string
  uncovered?: string[]
}
interface Report {
  source: string
  findings: Array<{ level: string; path: string; message: string; hint: string }>
  signatures?: Array<{ card?: string; outcome: string; signatures: SignatureCheck[] }>
}

const publicJwk = async (key: KeyObject, kid?: string): Promise<JWK> => {
  const jwk = key.export({ format: 'jwk' }) as JWK
  return { ...jwk, kid: kid ?? (await calculateJwkThumbprint(jwk)) }
}

let folder: string
let agent: StartedA2a
/** The agent's key pair (ES256, its kid the thumbprint) and a JWKS file holding its public key and one other. */
let agentKey: { privateKey: KeyObject; publicKey: KeyObject }
let kid: string
let jwksFile: string
const running = new Set<ChildProcess>()
const servers = new Set<Server>()

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'a2a-card-signature-'))
  agentKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const agentJwk = await publicJwk(agentKey.publicKey)
  kid = agentJwk.kid!
  const other = await publicJwk(generateKeyPairSync('ed25519').publicKey, 'other-agent')
  jwksFile = file('jwks.json', JSON.stringify({ keys: [other, agentJwk] }))
  const keyFile = file('card-key.pem', agentKey.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string)
  agent = await startA2a('a2a-signed-agent-', AGENT, { A2A_CARD_SIGNING_KEY: keyFile })
})

afterEach(async () => {
  for (const child of running) process.kill(child.pid!, 'SIGKILL')
  await Promise.all([...servers].map((server) => new Promise((resolve) => server.close(resolve))))
  servers.clear()
})

afterAll(async () => {
  await agent?.dispose()
  rmSync(folder, { recursive: true, force: true })
})

function file(name: string, text: string): string {
  writeFileSync(join(folder, name), text)
  return join(folder, name)
}

const validate = (args: string[]): Promise<CommandResult> =>
  runA2a(['card', 'validate', ...args], { cwd: folder, env: cleanEnv, running })

async function validateJson(args: string[]): Promise<CommandResult & { report: Report }> {
  const result = await validate([...args, '--json'])
  return { ...result, report: JSON.parse(result.stdout) }
}

/** A loopback server answering every path with `body`, counting the requests. */
async function serve(body: unknown): Promise<{ url: string; requests: () => number }> {
  let requests = 0
  const server = createServer((_request, response) => {
    requests++
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  })
  servers.add(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return { url: `http://127.0.0.1:${port}/`, requests: () => requests }
}

async function servedCard(version?: string): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = version ? { 'A2A-Version': version } : {}
  return (await fetch(new URL('.well-known/agent-card.json', agent.url), { headers })).json()
}

describe('a2a card validate --jwks', () => {
  it("verifies both A2A cards of a running agent against a JWKS file, naming the kid and the key's thumbprint", async () => {
    const { code, report } = await validateJson([agent.url, '--jwks', jwksFile])
    expect(code).toBe(0)
    expect(report.findings).toEqual([])
    const thumbprint = await calculateJwkThumbprint(await publicJwk(agentKey.publicKey))
    expect(report.signatures).toEqual([
      {
        card: 'the A2A v1.0 card',
        outcome: 'verified',
        signatures: [
          {
            path: 'signatures[0]',
            outcome: 'verified',
            alg: 'ES256',
            kid,
            key: { kid, thumbprint },
            covers: 'a2a-1.0-fields',
            uncovered: ['$.url', '$.preferredTransport', '$.additionalInterfaces'],
          },
        ],
      },
      {
        card: 'the A2A v0.3 card',
        outcome: 'verified',
        signatures: [
          { path: 'signatures[0]', outcome: 'verified', alg: 'ES256', kid, key: { kid, thumbprint }, covers: 'whole' },
        ],
      },
    ])
    const text = await validate([agent.url, '--jwks', jwksFile])
    expect(text.code).toBe(0)
    expect(text.stdout).toContain(`the A2A v0.3 card: verified signatures[0]: ES256 signature with kid "${kid}"`)
    expect(text.stdout).toContain(`of ${jwksFile}; covers every field`)
    expect(text.stdout.trimEnd().split('\n').at(-1)).toBe(
      `${agent.url}.well-known/agent.json: valid; signatures A2A v1.0 card verified, A2A v0.3 card verified`,
    )
  })

  it('verifies against a JWKS URL, fetched from there only', async () => {
    const jwks = await serve({ keys: [await publicJwk(agentKey.publicKey)] })
    const cardUrl = `${agent.url}.well-known/agent-card.json`
    const { code, report } = await validateJson([cardUrl, '--jwks', `${jwks.url}jwks.json`])
    expect(code).toBe(0)
    expect(report.signatures!.map((card) => card.outcome)).toEqual(['verified', 'verified'])
    expect(jwks.requests()).toBe(1)
  })

  it("given the platform card's URL, verifies the A2A cards beside it (agent.json has no signatures)", async () => {
    const { code, report } = await validateJson([`${agent.url}.well-known/agent.json`, '--jwks', jwksFile])
    expect(code).toBe(0)
    expect(report.source).toBe(`${agent.url}.well-known/agent.json`)
    expect(report.signatures!.map((card) => [card.card, card.outcome])).toEqual([
      ['the A2A v1.0 card', 'verified'],
      ['the A2A v0.3 card', 'verified'],
    ])
  })

  it('refuses a tampered card file: exit 1, the signature named as not matching', async () => {
    const tampered = file(
      'tampered.json',
      JSON.stringify({ ...(await servedCard()), description: 'Now also wires money' }),
    )
    const { code, report } = await validateJson([tampered, '--jwks', jwksFile])
    expect(code).toBe(1)
    expect(report.signatures![0]!.outcome).toBe('invalid')
    expect(report.findings.map((finding) => [finding.level, finding.path])).toEqual([['error', 'signatures[0]']])
    expect(report.findings[0]!.message).toMatch(/^invalid: ES256 signature with kid ".+": the signature does not match/)
    const text = await validate([tampered, '--jwks', jwksFile])
    expect(text.code).toBe(1)
    expect(text.stdout).not.toContain('verified')
    expect(text.stdout).toMatch(/^error +signatures\[0\]: invalid:/m)
  })

  it('a card signed with a key the JWKS lacks is unverifiable: a warning, exit 0', async () => {
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const card = await generateAgentCardSignature(stranger.privateKey, { alg: 'ES256', typ: 'JOSE', kid: 'stranger' })(
      (await servedCard('1.0')) as never,
    )
    const signedElsewhere = file('stranger.json', JSON.stringify({ ...card, signatures: card.signatures!.slice(-1) }))
    const { code, report } = await validateJson([signedElsewhere, '--jwks', jwksFile])
    expect(code).toBe(0)
    expect(report.signatures![0]!.outcome).toBe('unverifiable')
    expect(report.findings.map((finding) => [finding.level, finding.message])).toEqual([
      ['warning', `unverifiable: ES256 signature with kid "stranger", no ES256 key with kid "stranger" in ${jwksFile}`],
    ])
  })

  it('the same kid with another key is a mismatch, not a pass (exit 1)', async () => {
    const impostor = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const card = await generateAgentCardSignature(impostor.privateKey, { alg: 'ES256', typ: 'JOSE', kid })(
      (await servedCard('1.0')) as never,
    )
    const forged = file('forged.json', JSON.stringify({ ...card, signatures: card.signatures!.slice(-1) }))
    const { code, report } = await validateJson([forged, '--jwks', jwksFile])
    expect(code).toBe(1)
    expect(report.signatures![0]!.outcome).toBe('invalid')
  })

  it('an unsigned card is reported unsigned, never an error', async () => {
    const { signatures: _signatures, ...unsigned } = await servedCard()
    const plain = file('unsigned.json', JSON.stringify(unsigned))
    const { code, report } = await validateJson([plain, '--jwks', jwksFile])
    expect(code).toBe(0)
    expect(report.findings).toEqual([])
    expect(report.signatures).toEqual([{ outcome: 'unsigned', signatures: [] }])
    const text = await validate([plain, '--jwks', jwksFile])
    expect(text.stdout).toContain('note    signatures: unsigned (signing is optional)')
    expect(text.stdout.trimEnd().split('\n').at(-1)).toBe(`${plain}: valid; signature unsigned`)
    // Without --jwks an unsigned card's report is what it always was.
    expect((await validateJson([plain])).report).toEqual({ source: plain, findings: [] })
  })

  it('without --jwks a signed card is unverifiable, with the hint to pass --jwks; the jku it names is not fetched', async () => {
    const keyHost = await serve({ keys: [await publicJwk(agentKey.publicKey)] })
    const card = await generateAgentCardSignature(agentKey.privateKey, {
      alg: 'ES256',
      typ: 'JOSE',
      kid,
      jku: `${keyHost.url}jwks.json`,
    })((await servedCard('1.0')) as never)
    const pointing = file('pointing.json', JSON.stringify({ ...card, signatures: card.signatures!.slice(-1) }))
    const { code, report } = await validateJson([pointing])
    expect(code).toBe(0)
    expect(report.signatures![0]!.outcome).toBe('unverifiable')
    expect(report.findings).toEqual([
      expect.objectContaining({ level: 'warning', path: 'signatures[0]', hint: expect.stringContaining('--jwks') }),
    ])
    // Given keys that lack it, the signature stays unverifiable: the key URL the card names is still not read.
    const otherKeys = file(
      'other-jwks.json',
      JSON.stringify({ keys: [await publicJwk(generateKeyPairSync('ed25519').publicKey)] }),
    )
    const withKeys = await validateJson([pointing, '--jwks', otherKeys])
    expect(withKeys.code).toBe(0)
    expect(withKeys.report.signatures![0]!.outcome).toBe('unverifiable')
    expect(keyHost.requests()).toBe(0)
  })

  it("verifies a card the official SDK signed (its v1.0 fields), and the agent's v1.0 card with the SDK's verifier", async () => {
    const { verifyAgentCardSignature } = await import('@a2a-js/sdk')
    const sdkKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const sdkJwks = file('sdk-jwks.json', JSON.stringify({ keys: [await publicJwk(sdkKey.publicKey, 'sdk-key')] }))
    const { signatures: _signatures, ...unsigned } = await servedCard('1.0')
    const card = await generateAgentCardSignature(sdkKey.privateKey, { alg: 'RS256', typ: 'JOSE', kid: 'sdk-key' })(
      unsigned as never,
    )
    const { code, report } = await validateJson([file('sdk-signed.json', JSON.stringify(card)), '--jwks', sdkJwks])
    expect(code).toBe(0)
    expect(report.signatures![0]!.signatures[0]).toMatchObject({ outcome: 'verified', covers: 'a2a-1.0-fields' })
    // And the other way: the agent's own v1.0 card passes the SDK's verifier with the key the JWKS file holds.
    const agentCard = await servedCard('1.0')
    await expect(verifyAgentCardSignature(async () => agentKey.publicKey)(agentCard as never)).resolves.toBeUndefined()
  })

  it('a --jwks that is not a key set is one line, exit 1', async () => {
    const result = await validate([
      file('card-as-keys.json', '{"name":"x"}'),
      '--jwks',
      join(folder, 'card-as-keys.json'),
    ])
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining('not a JWKS')])
  })
})

describe('a2a start with a card signing key', () => {
  it('a public key file stops it: exit 1, one line naming the setting and the file', async () => {
    const project = makeAgentProject('a2a-card-bad-key-', AGENT)
    try {
      const publicFile = file('public.pem', agentKey.publicKey.export({ type: 'spki', format: 'pem' }) as string)
      const env = { ...cleanEnv, PORT: '0', HOST: '127.0.0.1', A2A_CARD_SIGNING_KEY: publicFile }
      const result = await runA2a(['start'], { cwd: project, env, running })
      expect(result.code).toBe(1)
      expect(result.stderr.trim().split('\n')).toEqual([
        expect.stringContaining(`cardSigning.key (A2A_CARD_SIGNING_KEY): ${publicFile}: a public key`),
      ])
    } finally {
      rmSync(project, { recursive: true, force: true })
    }
  })
})
