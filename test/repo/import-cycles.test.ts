import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// No module of the runtime or the generator imports itself back through others, type imports included: a cycle
// works only while every use of the other side waits inside a function, and breaks the day one moves to the
// top level; and it blurs which layer stands on which (the bindings share `bindings/_params.ts`, shared types
// live in `types.ts`).

const root = fileURLToPath(new URL('../..', import.meta.url))

function sourcesOf(dir: string): string[] {
  const found: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) found.push(...sourcesOf(path))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) found.push(path)
  }
  return found
}

// `import … from '…'` and `export … from '…'` (type-only too, over several lines), `import '…'`, `import('…')`.
const IMPORTS = [/^\s*(?:import|export)\s[^;]*?\sfrom\s+['"]([^'"]+)['"]/gm, /^\s*import\s+['"]([^'"]+)['"]/gm, /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g]

/** Each module's relative imports (static, type-only, re-exports and dynamic), as resolved source paths. */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const source = readFileSync(file, 'utf8')
    const local = IMPORTS.flatMap((pattern) => Array.from(source.matchAll(pattern), (match) => match[1]!)).filter((name) => name.startsWith('.'))
    graph.set(
      file,
      local.map((name) => resolve(dirname(file), name.replace(/\.js$/, '.ts'))),
    )
  }
  return graph
}

/** The cycles a depth-first walk meets, each as the modules around it; none when the graph has none. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = []
  const done = new Set<string>()
  const path: string[] = []
  const onPath = new Set<string>()
  const visit = (module: string) => {
    path.push(module)
    onPath.add(module)
    for (const next of graph.get(module) ?? []) {
      if (onPath.has(next)) cycles.push([...path.slice(path.indexOf(next)), next])
      else if (!done.has(next) && graph.has(next)) visit(next)
    }
    path.pop()
    onPath.delete(module)
    done.add(module)
  }
  for (const module of graph.keys()) if (!done.has(module)) visit(module)
  return cycles
}

describe('import cycles', () => {
  it.each([['runtime/src'], ['src']])('%s has none, type imports included', (dir) => {
    const files = sourcesOf(join(root, dir))
    expect(files.length).toBeGreaterThan(10)
    const cycles = cyclesOf(importGraph(files)).map((cycle) => cycle.map((file) => relative(join(root, dir), file)).join(' → '))
    expect(cycles).toEqual([])
  })

  it('reads every kind of import (the check itself)', () => {
    const dir = join(root, 'runtime/src')
    const graph = importGraph([join(dir, 'bindings/_platform-params.ts'), join(dir, 'stores/contract/task-store-contract.ts')])
    // A value import, a type-only one, and a re-export.
    expect(graph.get(join(dir, 'bindings/_platform-params.ts'))).toEqual(expect.arrayContaining([join(dir, 'bindings/_params.ts'), join(dir, 'push/_configs.ts'), join(dir, 'core/_engine.ts')]))
    expect(graph.get(join(dir, 'stores/contract/task-store-contract.ts'))).toContain(join(dir, 'stores/contract/_session.ts'))
  })

  it('finds a cycle when there is one (the check itself)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ])
    expect(cyclesOf(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']])
  })
})
