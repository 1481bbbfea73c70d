import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// The runtime's build puts the server's own modules in a few large chunks (runtime/scripts/_chunk-groups.mjs), so
// that a2a start reads few files. Programs without the server must not load them with it: the client, telemetry for
// a client, the CLI's other commands; nor a Worker Node's server. Run on the built package (after `npm run build`).

const dist = fileURLToPath(new URL('../../runtime/dist/', import.meta.url))

/** The built files a module loads before it runs (static imports, followed), and the packages they import. */
function staticGraph(file: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (path: string) => {
    if (files.has(path)) return
    files.add(path)
    const source = readFileSync(path, 'utf8')
    for (const [, specifier] of source.matchAll(/^(?:import|export)\s[^;]*?from\s*"([^"]+)"|^import\s*"([^"]+)"/gm)) {
      if (specifier === undefined) continue
      if (specifier.startsWith('.')) visit(resolve(dirname(path), specifier))
      else packages.add(specifier)
    }
  }
  visit(join(dist, file))
  return { files, packages }
}

/** The chunk `a2a <command>` other than start and dev loads first: what main.js imports for commander. */
function commanderProgram(): string {
  const main = readFileSync(join(dist, 'cli/main.js'), 'utf8')
  const chunk = /import\("\.\.\/(_chunks\/_program-[\w-]+\.js)"\)/.exec(main)?.[1]
  if (!chunk) throw new Error(`cli/main.js imports no _program chunk:\n${main}`)
  return chunk
}

describe('the built runtime’s chunks', () => {
  it.each(['entries/client.js', 'entries/telemetry.js', 'commander'])('%s loads no HTTP server', (entry) => {
    const { packages } = staticGraph(entry === 'commander' ? commanderProgram() : entry)
    expect([...packages].filter((name) => name === 'srvx' || name.startsWith('srvx/'))).toEqual([])
  })

  // Entries for an agent's code or its store, which a Worker may bundle too: each loads what it did before the
  // grouping, not the chunks of Node's server (the ai-sdk adapter pulled in 14 files, srvx's Node adapter, node:http).
  it.each([
    'adapters/ai-sdk/index.js',
    'adapters/mastra/index.js',
    'adapters/langgraph/index.js',
    'entries/file-store.js',
    'entries/redis-store.js',
    'entries/postgres-store.js',
    'entries/store.js',
    'entries/grpc.js',
  ])('%s loads no Node server (srvx/node, node:http)', (entry) => {
    const { packages } = staticGraph(entry)
    expect([...packages].filter((name) => name === 'srvx/node' || name === 'node:http')).toEqual([])
  })

  it("a Worker's entry loads no Node server (srvx's Node adapter)", () => {
    const { packages } = staticGraph('entries/workers.js')
    expect(packages.has('srvx')).toBe(true)
    expect(packages.has('srvx/node')).toBe(false)
  })

  it('the index loads the server (the check above can see it)', () => {
    expect(staticGraph('index.js').packages.has('srvx/node')).toBe(true)
  })
})
