import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { describeLoadFailure } from '../../runtime/src/dev/_load-failure.ts'

/** The location of a load failure, for project paths that stacks print as they are and file URLs percent-encode. */
describe('describeLoadFailure', () => {
  const root = '/home/ada/My Agents/wetter-äpp'
  const failure = (stack: string) => Object.assign(new Error('config missing'), { stack: `Error: config missing\n${stack}` })

  it('finds the place in a path with spaces and non-ASCII letters', () => {
    expect(describeLoadFailure(failure(`    at ${root}/src/agent.ts:7:9\n    at async Function.import (/x/node_modules/jiti/dist/jiti.cjs:1:2)`), root)).toBe(
      'src/agent.ts:7:9 Error: config missing',
    )
  })

  it('finds the place in a percent-encoded file URL', () => {
    const url = pathToFileURL(`${root}/src/tools/geo.mjs`).href
    expect(url).toContain('%20')
    expect(describeLoadFailure(failure(`    at loadGeo (${url}:12:3)`), root)).toBe('src/tools/geo.mjs:12:3 Error: config missing')
  })

  it("skips the project's node_modules and other folders", () => {
    const stack = `    at ${root}/node_modules/lib/index.js:1:1\n    at /elsewhere/src/agent.ts:2:2\n    at ${root}/src/agent.ts:3:4`
    expect(describeLoadFailure(failure(stack), root)).toBe('src/agent.ts:3:4 Error: config missing')
  })

  it('finds the place in a project that itself lives under a node_modules folder', () => {
    const nested = '/srv/node_modules/some-tool/fixtures/agent'
    const stack = `    at ${nested}/node_modules/lib/index.js:1:1\n    at ${nested}/src/agent.ts:5:6`
    expect(describeLoadFailure(failure(stack), nested)).toBe('src/agent.ts:5:6 Error: config missing')
  })
})
