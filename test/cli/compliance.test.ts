import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { parse } from 'yaml'
import { TEST_AUDIENCE } from '../_oidc-issuer.ts'
import { type OAuthServer, startOAuthServer } from '../fixtures/oauth-server.ts'
import { type Agents, startAgents } from './_compliance/agents.ts'
import { ALL_CHECKS } from './_compliance/checks.ts'
import { envelopes } from './_compliance/cli.ts'
import { contextFor, type Shared, sharedRoot } from './_compliance/context.ts'
import { breakdown } from './_compliance/defaults.ts'
import { Observations, type Outcome } from './_compliance/outcome.ts'
import { reportMarkdown, reportYaml } from './_compliance/report.ts'
import { ERROR_CODES, REQUIREMENTS } from './_compliance/requirements.ts'

// The A2A CLI specification's compliance report, measured: one test per requirement runs `a2a` (the built runtime)
// as a process against live agents on 127.0.0.1 and records what it saw; the last test writes CLI-COMPLIANCE.yaml
// and CLI-COMPLIANCE.md from the results and fails when they differ from the committed ones, so the claim the
// report makes stays true.

const root = fileURLToPath(new URL('../..', import.meta.url))
const YAML_FILE = join(root, 'CLI-COMPLIANCE.yaml')
const MD_FILE = join(root, 'CLI-COMPLIANCE.md')
const TEST_FILE = 'test/cli/compliance.test.ts'

const committed = existsSync(YAML_FILE)
  ? (parse(readFileSync(YAML_FILE, 'utf8')) as {
      report: { report_date: string }
      requirements: Record<string, { status: string; note: string | null }>
    })
  : undefined

const outcomes = new Map<string, Outcome & { evidence: string }>()
let shared: Shared | undefined

/** A self-signed certificate for 127.0.0.1, made by openssl (undefined without it: the TLS checks say so). */
function selfSigned(folder: string): { key: string; cert: string } | undefined {
  const key = join(folder, 'key.pem')
  const cert = join(folder, 'cert.pem')
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '2',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    )
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') }
  } catch {
    return undefined
  }
}

beforeAll(async () => {
  const folder = sharedRoot()
  let oauth: OAuthServer | undefined
  let agents: Agents | undefined
  try {
    oauth = await startOAuthServer()
    agents = await startAgents(oauth.url, TEST_AUDIENCE)
    mkdirSync(join(folder, 'tls'))
    shared = { agents, oauth, tls: selfSigned(join(folder, 'tls')), root: folder, rawAgents: [] }
  } catch (error) {
    await agents?.close()
    await oauth?.stop()
    rmSync(folder, { recursive: true, force: true })
    throw error
  }
})

afterAll(async () => {
  if (!shared) return
  await Promise.all(shared.rawAgents.map((agent) => agent.close()))
  await shared.agents.close()
  await shared.oauth.stop()
  rmSync(shared.root, { recursive: true, force: true })
})

describe.concurrent('A2A CLI specification v0.2, each requirement against live agents', () => {
  for (const check of ALL_CHECKS) {
    const name = `${check.id}: ${check.how}`
    // The checks run side by side, each starting CLI processes: on a slow two-core machine one waits on the others'
    // processes for most of its time, so its clock is four times what it needs alone. A check fails by what it saw.
    it(name, { timeout: 4 * (check.timeoutMs ?? 30_000) }, async ({ expect }) => {
      const observe = new Observations()
      let outcome: Outcome
      try {
        outcome = (await check.run(contextFor(check, shared!), observe)) ?? observe.outcome()
      } catch (error) {
        outcomes.set(check.id, {
          status: 'fail',
          note: `the check could not run: ${(error as Error).message}`,
          evidence: `${TEST_FILE} › ${name}`,
        })
        throw error
      }
      // A check may only return what is not a pass: a pass comes from its observations alone.
      if (outcome.status === 'pass' && observe.outcome().status !== 'pass') outcome = observe.outcome()
      outcomes.set(check.id, { ...outcome, evidence: `${TEST_FILE} › ${name}` })
      const before = committed?.requirements[check.id]
      if (before)
        expect({ status: outcome.status, note: outcome.note }, 'as CLI-COMPLIANCE.yaml has it').toEqual({
          status: before.status,
          note: before.note,
        })
    })
  }
})

describe('the report', () => {
  it('CLI-COMPLIANCE.yaml and CLI-COMPLIANCE.md are what the checks found', ({ expect }) => {
    const toolVersion = (JSON.parse(readFileSync(join(root, 'runtime/package.json'), 'utf8')) as { version: string })
      .version
    const errorCodes = Object.fromEntries(
      Object.keys(ERROR_CODES).map((code) => {
        const seen = envelopes.filter((envelope) => envelope.code === code).map((envelope) => envelope.check)
        const by = [...new Set(seen)].sort()
        return [
          code,
          { emitted: by.length > 0, note: by.length > 0 ? `seen in ${by.join(', ')}` : 'no check provoked it' },
        ]
      }),
    )
    const build = (date: string) => {
      const input = { toolVersion, date, outcomes, breakdown: breakdown(), errorCodes }
      return { yaml: reportYaml(input), md: reportMarkdown(input) }
    }
    const before = {
      yaml: existsSync(YAML_FILE) ? readFileSync(YAML_FILE, 'utf8') : '',
      md: existsSync(MD_FILE) ? readFileSync(MD_FILE, 'utf8') : '',
    }
    // The date is the last change of the results: kept while they are the same.
    const same = build(committed?.report.report_date ?? '')
    expect(parse(same.yaml).requirements).toBeTypeOf('object')
    if (!committed || same.yaml !== before.yaml || same.md !== before.md) {
      const fresh = build(new Date().toISOString().slice(0, 10))
      writeFileSync(YAML_FILE, fresh.yaml)
      writeFileSync(MD_FILE, fresh.md)
      expect.fail('the CLI compliance report changed: review and commit CLI-COMPLIANCE.*')
    }
    // Every requirement of the registry has its check, and no check is for something else.
    expect(ALL_CHECKS.map((check) => check.id).sort()).toEqual(REQUIREMENTS.map((each) => each.id).sort())
  })
})
