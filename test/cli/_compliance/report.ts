import type { Outcome, Status } from './outcome.ts'
import { areaOf, DEFAULTS, type DefaultKey, ERROR_CODES, REQUIREMENTS } from './requirements.ts'
import { type DefaultRow, summarize, type TierSummary, tierClaimed } from './summary.ts'

/**
 * CLI-COMPLIANCE.yaml (the specification's machine-readable template, filled) and CLI-COMPLIANCE.md (the same as
 * the tables of its COMPLIANCE.md), both from the checks' results. Nothing here reads the clock: the date is given.
 */

export interface ReportInput {
  toolVersion: string
  /** YYYY-MM-DD: the date the results last changed. */
  date: string
  outcomes: ReadonlyMap<string, Outcome & { evidence: string }>
  breakdown: Partial<Record<DefaultKey, DefaultRow>>
  errorCodes: Record<string, { emitted: boolean; note: string | null }>
}

const SPEC_REVISION = '2026-08-17'
const TEST_FILE = 'test/cli/compliance.test.ts'
const AGENTS = [
  "this runtime's agents (serveAgent: streaming, push notifications, a signed card; one without streaming; one " +
    'taking a bearer token, an API key or OpenID Connect JWTs, with an extended card)',
  "an A2A v1.0-only agent on the official SDK's server (@a2a-js/sdk), its interfaces in either order",
  'scripted agents on node:http recording every request (a tenant, an UNSPECIFIED state, a cut stream, TLS)',
]
const TCK =
  "yes for this runtime's agent (CONFORMANCE.md: the official kit's runs, no failure the runtime's); unknown " +
  "for the SDK's server; the scripted agents misbehave on purpose"
const TRANSPORTS = ['JSON-RPC', 'HTTP+JSON']

const MARKS: Record<Status, string> = {
  pass: '✅ Pass',
  partial: '◐ Partial',
  fail: '❌ Fail',
  not_measured: '⊘ Not measured',
  na: '— N/A',
}

const q = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value))

export function reportYaml(input: ReportInput): string {
  const summary = summarize(
    input.outcomes,
    input.breakdown,
    DEFAULTS.map(([key]) => key),
  )
  const tier = tierClaimed(summary)
  const lines = [
    '# a2a-cli compliance report: the A2A CLI specification v0.2, measured by npm test',
    `# (${TEST_FILE} runs each check against live agents and regenerates this file and CLI-COMPLIANCE.md).`,
    '# Do not edit by hand: change the CLI or the checks, run the test, and commit what it writes.',
    '',
    'report:',
    '  tool: a2a',
    `  tool_version: ${q(input.toolVersion)}`,
    '  package: a2a-runtime',
    '  language: TypeScript',
    '  repository: "https://www.npmjs.com/package/a2a-runtime"',
    '  maintainer: "the a2a-runtime maintainers"',
    `  report_date: ${q(input.date)}`,
    '  spec_version: "0.2"',
    `  spec_revision: ${q(SPEC_REVISION)}`,
    '  a2a_versions: ["1.0"]',
    `  agent_tested: ${q(AGENTS.join('; '))}`,
    `  agent_tck_conformant: ${q(TCK)}`,
    `  transports_covered: [${TRANSPORTS.join(', ')}]`,
    `  tier_claimed: ${tier === 0 ? 'none' : tier}`,
    '',
    '# From the statuses below: only pass (and a genuine na) satisfies; a tier needs the tiers under it.',
    'summary:',
    ...([1, 2, 3] as const).map((level) => `  tier_${level}: ${flowSummary(summary[level])}`),
    '',
    'requirements:',
  ]
  for (const level of [1, 2, 3] as const) {
    lines.push('', `  # Tier ${level}`)
    for (const requirement of REQUIREMENTS.filter((each) => each.tier === level)) {
      const outcome = input.outcomes.get(requirement.id)
      lines.push(
        `  ${requirement.id}:`,
        `    tier: ${level}`,
        `    area: ${areaOf(requirement.id)}`,
        `    spec: ${q(requirement.spec)}`,
        `    requirement: ${q(requirement.requirement)}`,
        `    status: ${outcome?.status ?? 'not_measured'}`,
        `    note: ${q(outcome ? outcome.note : 'no check ran')}`,
        `    evidence: ${q(outcome?.evidence ?? null)}`,
      )
    }
  }
  lines.push('', '# DEFAULT_001 passes only when every row is shipped and overridable.', 'default_001_breakdown:')
  for (const [key] of DEFAULTS) {
    const row = input.breakdown[key]
    lines.push(
      `  ${key}: {shipped: ${yesNo(row?.shipped)}, overridable: ${yesNo(row?.overridable)}, ` +
        `note: ${q(row?.note ?? null)}}`,
    )
  }
  lines.push('', '# The A2ACLI_ERR_* codes the tool emits, each seen by a check.', 'error_codes:')
  for (const code of Object.keys(ERROR_CODES)) {
    const row = input.errorCodes[code]
    lines.push(`  ${code}: {emitted: ${yesNo(row?.emitted)}, note: ${q(row?.note ?? null)}}`)
  }
  lines.push(
    '',
    'attestation:',
    `  reported_by: ${q(`${TEST_FILE}, run by npm test`)}`,
    `  date: ${q(input.date)}`,
    '  statement: "The tier claimed reflects the evidence recorded above."',
    '',
  )
  return lines.join('\n')
}

const yesNo = (value: boolean | undefined) => (value ? 'yes' : 'no')

const flowSummary = (row: TierSummary) =>
  `{ total: ${row.total}, pass: ${row.pass}, partial: ${row.partial}, fail: ${row.fail}, ` +
  `not_measured: ${row.not_measured}, na: ${row.na}, satisfied: ${row.satisfied} }`

/** A table cell: one line, pipes escaped. */
const cell = (text: string | null | undefined) => (text ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ')

export function reportMarkdown(input: ReportInput): string {
  const summary = summarize(
    input.outcomes,
    input.breakdown,
    DEFAULTS.map(([key]) => key),
  )
  const tier = tierClaimed(summary)
  const tierNames = { 1: 'Tier 1 — Core', 2: 'Tier 2 — Standard', 3: 'Tier 3 — Advanced' } as const
  const out: string[] = [
    '# a2a-cli Compliance Report: `a2a` (a2a-runtime)',
    '',
    `Generated by \`${TEST_FILE}\` in \`npm test\`: each requirement is checked by running \`a2a\` as a process`,
    'against live agents on 127.0.0.1, and this file and `CLI-COMPLIANCE.yaml` are written from the results. A',
    'change in any result fails the test until the new report is reviewed and committed.',
    '',
    '## 1. Summary',
    '',
    '| Field | Value |',
    '| --- | --- |',
    '| Tool name | `a2a` (npm package `a2a-runtime`) |',
    `| Tool version | \`${input.toolVersion}\` |`,
    '| Implementation language | TypeScript |',
    '| Repository | https://www.npmjs.com/package/a2a-runtime |',
    '| Maintainer / contact | the a2a-runtime maintainers |',
    `| Report date | \`${input.date}\` |`,
    '| Specification version targeted | `0.2` |',
    `| Specification revision (Last updated) | \`${SPEC_REVISION}\` |`,
    `| **Tier claimed** | ${tier === 0 ? 'none' : `Tier ${tier}`} |`,
    '| A2A protocol version(s) | 1.0 |',
    `| Agent exercised against | ${cell(AGENTS.join('; '))} |`,
    `| That agent is TCK-conformant? | ${cell(TCK)} |`,
    `| Transports covered | ${TRANSPORTS.join(', ')} |`,
    '',
    '## 2. Legend',
    '',
    '| Mark | Meaning |',
    '| --- | --- |',
    '| `✅ Pass` | Implemented, and the check saw it behave |',
    '| `◐ Partial` | Partly implemented: the note says what is missing |',
    '| `❌ Fail` | Not implemented, or the check saw it behave otherwise (the note says how) |',
    '| `⊘ Not measured` | Applies, but could not be exercised: not a pass |',
    '| `— N/A` | Does not apply to this tool |',
    '',
    '## 3. Results at a glance',
    '',
    '| Tier | Requirements | `✅` | `◐` | `❌` | `⊘` | `—` | Tier satisfied? |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...([1, 2, 3] as const).map((level) => {
      const row = summary[level]
      const counts = [row.total, row.pass, row.partial, row.fail, row.not_measured, row.na]
      return `| ${tierNames[level]} | ${counts.join(' | ')} | ${row.satisfied ? 'yes' : 'no'} |`
    }),
  ]
  const table = (level: 1 | 2 | 3, heading: string) => {
    out.push('', heading, '', '| ID | Requirement | Spec § | Status | Notes |', '| --- | --- | --- | --- | --- |')
    for (const requirement of REQUIREMENTS.filter((each) => each.tier === level)) {
      const outcome = input.outcomes.get(requirement.id)
      const status = MARKS[outcome?.status ?? 'not_measured']
      const note = cell(outcome ? outcome.note : 'no check ran')
      out.push(
        `| \`${requirement.id}\` | ${cell(requirement.requirement)} | ${requirement.spec} | ${status} | ${note} |`,
      )
    }
  }
  table(1, '## 4. Tier 1 — Core (required)')
  out.push(
    '',
    '### 4a. `A2ACLI_DEFAULT_001` breakdown',
    '',
    '| Default (§6.5) | Shipped? (yes/no) | Overridable by flag? (yes/no) | Notes |',
    '| --- | --- | --- | --- |',
    ...DEFAULTS.map(([key, label]) => {
      const row = input.breakdown[key]
      return `| ${label} | ${yesNo(row?.shipped)} | ${yesNo(row?.overridable)} | ${cell(row?.note)} |`
    }),
  )
  table(2, '## 5. Tier 2 — Standard')
  table(3, '## 6. Tier 3 — Advanced')
  out.push(
    '',
    '## 7. Test evidence',
    '',
    `- **How the tool was exercised:** \`npx vitest run ${TEST_FILE}\` (part of \`npm test\`): one test per`,
    '  requirement, named by its id, each running `node runtime/bin/a2a.mjs` (the built runtime) as a process.',
    "- **Results / logs:** the test's own output; each requirement's evidence in `CLI-COMPLIANCE.yaml` names its",
    '  test.',
    `- **Environment:** Node.js on Linux; agents on 127.0.0.1: ${cell(AGENTS.join('; '))}.`,
    '- **Known gaps / caveats:** every status other than a pass carries its reason in the tables above; the tier',
    `  claimed is the highest one every requirement of which (and of the tiers below) passed: ${tier === 0 ? 'none' : `Tier ${tier}`}.`,
    '',
    '## 8. Error code coverage',
    '',
    '| Code | Emitted (yes/no) | Notes |',
    '| --- | --- | --- |',
    ...Object.keys(ERROR_CODES).map((code) => {
      const row = input.errorCodes[code]
      return `| \`${code}\` | ${yesNo(row?.emitted)} | ${cell(row?.note)} |`
    }),
    '',
    '## 9. Attestation',
    '',
    `Reported by \`${TEST_FILE}\` (run by \`npm test\`) on ${input.date}. The tier claimed in §1 and §3 reflects the`,
    'evidence above.',
    '',
  )
  return out.join('\n')
}
