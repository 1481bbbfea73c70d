import { validate } from 'dockerfile-utils'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { globToRegExp, readDockerfile, type Stage, type Step, stageEnv } from './e2e-dockerfile.ts'
import { assertBuilt, type Workspace, workspace } from './template-support.ts'

/**
 * The generated Dockerfile, linted and read for what it promises. There is no Docker engine to build it here;
 * e2e.test.ts runs its steps and its CMD in folders instead.
 */

let space: Workspace
let project: string
let stages: Stage[]

beforeAll(async () => {
  assertBuilt()
  space = workspace('a2a-template-dockerfile-')
  project = await space.generate('boxed')
  stages = readDockerfile(space.read(project, 'Dockerfile'))
}, 60_000)

afterAll(() => space?.remove())

const final = () => stages.at(-1)!
const stepsOf = (stage: Stage, keyword: string) => stage.steps.filter((step) => step.keyword === keyword)
const indexOf = (stage: Stage, found: (step: Step) => boolean) => stage.steps.findIndex(found)

describe('the generated Dockerfile', () => {
  it('passes the linter without a warning', () => {
    expect(validate(space.read(project, 'Dockerfile'))).toEqual([])
  })

  it('builds on the active LTS line of Node, pinned by major, in every stage', () => {
    for (const stage of stages) {
      const [, major] = /^node:(\d+)-slim$/.exec(stage.image) ?? []
      expect(major, `${stage.image} is node:<major>-slim`).toBeDefined()
      // Even majors are the LTS lines; 24 is the active one (20 left maintenance in April 2026).
      expect(Number(major) % 2).toBe(0)
      expect(Number(major)).toBeGreaterThanOrEqual(24)
    }
  })

  it('installs the dependencies in a stage of their own, with npm ci on the lockfile and the vendored runtime copied first', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2)
    const deps = stages.find((stage) =>
      stage.steps.some((step) => step.keyword === 'RUN' && /\bnpm ci\b/.test(step.shell!)),
    )
    expect(deps, 'a stage runs npm ci').toBeDefined()
    expect(deps).not.toBe(final())
    const install = indexOf(deps!, (step) => step.keyword === 'RUN' && /\bnpm ci\b/.test(step.shell!))
    expect(install).toBeGreaterThan(-1)
    expect(stageEnv(deps!, install).NODE_ENV).toBe('production')
    expect(deps!.steps[install]!.shell).toMatch(/npm ci --omit=dev/)
    const copiedBefore = deps!.steps
      .slice(0, install)
      .filter((step) => step.keyword === 'COPY')
      .flatMap((step) => step.args.slice(0, -1))
    // Only what the install needs, so the layer is reused until a dependency changes.
    expect(copiedBefore).not.toContain('.')
    const copies = (path: string) => copiedBefore.some((source) => globToRegExp(source).test(path))
    expect(copies('package.json')).toBe(true)
    expect(copies('package-lock.json')).toBe(true)
    const runtime = (JSON.parse(space.read(project, 'package.json')) as { dependencies: Record<string, string> })
      .dependencies['a2a-runtime']!
    const tarball = /^file:\.\/(vendor)\//.exec(runtime)
    expect(tarball, 'from a clone, the runtime is a tarball in vendor/').not.toBeNull()
    expect(copies('vendor')).toBe(true)
  })

  it('runs the agent as an unprivileged user, in production, on the exposed port, with a health check on /healthz', () => {
    const stage = final()
    const env = stageEnv(stage)
    expect(env.NODE_ENV).toBe('production')
    expect(env.HOST).toBe('0.0.0.0')
    expect(stepsOf(stage, 'EXPOSE').map((step) => step.args[0])).toEqual([env.PORT])
    expect(
      stage.steps.some(
        (step) => step.keyword === 'COPY' && step.flags.from !== undefined && /node_modules/.test(step.args[0]!),
      ),
    ).toBe(true)

    const user = indexOf(stage, (step) => step.keyword === 'USER')
    expect(user).toBeGreaterThan(-1)
    expect(stage.steps[user]!.args[0]).not.toMatch(/^(root|0)(:|$)/)
    expect(stage.steps.slice(user + 1).some((step) => step.keyword === 'USER')).toBe(false)
    expect(user).toBeLessThan(indexOf(stage, (step) => step.keyword === 'CMD'))

    const [healthcheck] = stepsOf(stage, 'HEALTHCHECK')
    // /healthz, which a folder of agents serves too (its root has no card), and cheaper than rendering a card.
    expect(healthcheck?.shell).toContain("'/healthz'")
    expect(healthcheck?.shell).not.toContain('agent.json')
    // The slim image has neither curl nor wget: the check uses node.
    expect(healthcheck?.shell).toMatch(/^node /)

    const [cmd, ...more] = stepsOf(stage, 'CMD')
    expect(more).toEqual([])
    // Exec form, so the agent gets SIGTERM itself; not through npx, which may reach for the network.
    expect(cmd?.exec?.[0]).toBeDefined()
    expect(cmd!.exec![0]).not.toMatch(/^(npx|npm)$/)
  })

  it('keeps node_modules and the credential in .env out of the build context', () => {
    const ignored = space
      .read(project, '.dockerignore')
      .split('\n')
      .map((line) => line.trim())
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', '.env', '.git']))
  })
})
