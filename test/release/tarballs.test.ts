import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// What each package would publish (`npm pack --dry-run --json`, after the build `npm test` runs first): the
// files a release ships, their kinds, and a size budget, so a test, a benchmark or a stale build output never
// reaches a user's node_modules and the install stays small.

const root = fileURLToPath(new URL('../..', import.meta.url))

interface Packed {
  name: string
  size: number
  unpackedSize: number
  files: Array<{ path: string; size: number }>
}

function pack(workspace?: string): Packed {
  const args = ['pack', '--dry-run', '--json', '--ignore-scripts', ...(workspace ? ['--workspace', workspace] : [])]
  const [packed] = JSON.parse(
    execFileSync('npm', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
  ) as Packed[]
  return packed!
}

/** The modules a package's build makes from its sources: `src/x/y.ts` → `x/y`. */
function modulesOf(srcDir: string): string[] {
  const found: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
        found.push(relative(srcDir, path).slice(0, -'.ts'.length))
    }
  }
  walk(srcDir)
  return found.sort()
}

/**
 * The runtime's entry files, without `.js`: what its `exports` name, what its bin imports from dist/, and the gRPC
 * server, which grpc/serve-grpc.ts loads by its path (runtime/scripts/bundle.mjs, LOADED_BY_PATH).
 */
function runtimeEntries(): string[] {
  const manifest = JSON.parse(readFileSync(join(root, 'runtime/package.json'), 'utf8')) as {
    exports: Record<string, { default: string }>
  }
  const bin = readFileSync(join(root, 'runtime/bin/a2a.mjs'), 'utf8')
  const paths = [
    ...Object.values(manifest.exports).map((target) => target.default.replace('./dist/', '')),
    ...[...bin.matchAll(/'\.\.\/dist\/([^']+)'/g)].map((match) => match[1]!),
    'grpc/_server.js',
  ]
  return [...new Set(paths.map((path) => path.replace(/\.js$/, '')))].sort()
}

const KiB = 1024

describe.each([
  {
    name: 'a2a-runtime',
    workspace: 'a2a-runtime',
    dir: 'runtime',
    // The a2a command's Agent Skill (the A2A CLI specification §14): one SKILL.md and its worked examples.
    others: [
      'LICENSE',
      'README.md',
      'package.json',
      'bin/a2a.mjs',
      'skills/a2a/SKILL.md',
      'skills/a2a/references/examples.md',
    ],
    // Measured 2026-11-25: 181 KiB packed, 605 KiB unpacked, 190 files.
    // The dev inspector's page is 32 KiB of it packed, 97 KiB unpacked.
    // Measured 2026-11-27: 301 KiB packed, 975 KiB unpacked, 287 files (the heap prices, the file store's bounded
    // restart, Redis listings by what they show; no file of another kind).
    // Measured 2026-11-28: 360 KiB packed, 1160 KiB unpacked, 351 files (identity: OIDC verification 30 KiB and card
    // signing 21 KiB unpacked, owner indexes in every store, the inspector's scoped feed; no file of another kind).
    // Later 2026-11-28: 399 KiB packed, 1280 KiB unpacked, 385 files (every binding: HTTP+JSON 20 KiB, gRPC and its
    // descriptors 47 KiB, the interface probes, the inspector's REST; no file of another kind).
    // Later 2026-11-28: 577 KiB packed, 1863 KiB unpacked, 611 files (the client: the core 98 KiB unpacked, the
    // commands 69, output 43, configuration 26, OAuth login 53, conformance 111, completion 9; telemetry 97; no file
    // of another kind).
    budget: { packed: 640 * KiB, unpacked: 2100 * KiB },
  },
  {
    name: 'create-a2a-agent',
    workspace: 'create-a2a-agent',
    dir: 'generator',
    others: ['LICENSE', 'README.md', 'package.json', 'bin/create-a2a-agent.mjs'],
    // Measured 2026-11-25: 51 KiB packed, 150 KiB unpacked, 51 files (templates included).
    // Measured 2026-11-28: 91 KiB packed, 286 KiB unpacked, 114 files (the deploy targets' files and README sections,
    // the team template: its two agents, their link and tests 16 KiB unpacked, its README 7 KiB).
    budget: { packed: 110 * KiB, unpacked: 340 * KiB },
  },
])('the $name tarball', ({ name, workspace, dir, others, budget }) => {
  const packed = pack(workspace)
  const paths = packed.files.map((file) => file.path).sort()
  // The dev inspector's page is built apart (vite) into dist/inspector: an HTML file and the hashed files it names.
  const page = paths.filter((path) => path.startsWith('dist/inspector/'))
  const built = paths.filter((path) => path.startsWith('dist/') && !path.startsWith('dist/inspector/'))
  const templates = paths.filter((path) => path.startsWith('templates/'))

  it('holds its license, README, manifest and bin, and otherwise only its build output (and the generator its templates)', () => {
    expect(packed.name).toBe(name)
    expect(paths.filter((path) => !path.startsWith('dist/') && !path.startsWith('templates/')).sort()).toEqual(
      [...others].sort(),
    )
    if (name === 'a2a-runtime') expect(templates).toEqual([])
    else expect(templates.length).toBeGreaterThan(10)
  })

  it('ships each module of its sources as JavaScript with its types, no source maps, and nothing a deleted module left behind', () => {
    const modules = modulesOf(join(root, dir, 'src'))
    const shipped = (extension: string) =>
      built
        .filter((path) => path.endsWith(extension))
        .map((path) => path.slice('dist/'.length, -extension.length))
        .sort()
    // The runtime's JavaScript is bundled (runtime/scripts/bundle.mjs): its entry files at their paths, and chunks.
    if (name === 'a2a-runtime') {
      const chunks = shipped('.js').filter((path) => path.startsWith('_chunks/'))
      expect(shipped('.js').filter((path) => !path.startsWith('_chunks/'))).toEqual(runtimeEntries())
      expect(chunks.length).toBeGreaterThan(0)
      expect(chunks.every((path) => /^_chunks\/[\w-]+$/.test(path))).toBe(true)
    } else expect(shipped('.js')).toEqual(modules)
    expect(shipped('.d.ts')).toEqual(modules)
    expect(built.filter((path) => !path.endsWith('.js') && !path.endsWith('.d.ts'))).toEqual([])
  })

  it("ships the dev inspector's page only in a2a-runtime: its HTML and exactly the script and style sheet it names", () => {
    if (name !== 'a2a-runtime') {
      expect(page).toEqual([])
      return
    }
    const html = readFileSync(join(root, dir, 'dist/inspector/index.html'), 'utf8')
    const named = [...html.matchAll(/(?:src|href)="\/__a2a\/(assets\/[^"]+)"/g)].map(
      (match) => `dist/inspector/${match[1]}`,
    )
    expect(named.map((path) => path.split('.').pop()).sort()).toEqual(['css', 'js'])
    expect(page).toEqual(['dist/inspector/index.html', ...named].sort())
  })

  it("ships no tests, benchmarks, fixtures or TypeScript sources (a template is a project's source to be)", () => {
    const stray = paths.filter(
      (path) =>
        !path.startsWith('templates/') &&
        (/(^|\/)(test|tests|bench|fixtures|src)\//.test(path) || /\.test\.|\.spec\./.test(path)),
    )
    expect(stray).toEqual([])
  })

  it(`stays within its size budget (${budget.packed / KiB} KiB packed, ${budget.unpacked / KiB} KiB unpacked)`, () => {
    console.info(
      `${name}: ${(packed.size / KiB).toFixed(0)} KiB packed, ${(packed.unpackedSize / KiB).toFixed(0)} KiB unpacked, ${paths.length} files`,
    )
    expect(packed.size).toBeLessThan(budget.packed)
    expect(packed.unpackedSize).toBeLessThan(budget.unpacked)
  })
})
