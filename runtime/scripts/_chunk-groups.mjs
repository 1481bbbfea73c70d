// How bundle.mjs groups the runtime's modules into chunks. Left to itself, rolldown makes a chunk for each set of
// entries and modules imported on demand that load the same modules: some 30 files for one `a2a start`, which Node
// 20 opens, reads and links one at a time (each file costs about half a millisecond of a cold start). The server's
// own modules, those no lighter program loads, go into a few chunks instead: `runtime` (what a Worker loads too),
// `runtime-node` (Node's servers), `start` (a2a start's own). A lighter program (every entry of `exports` but the
// servers' two: the client, telemetry, the adapters, the stores, gRPC; and the CLI's other commands) loads what it
// did before: a server module it loads too goes into a chunk with the modules the very same programs and servers
// load, and nothing else.
import { join } from 'node:path'

/** A plugin that records the module graph rolldown built (each module's imports, static and on demand), by id. */
export function moduleGraphReader() {
  const imports = new Map()
  return {
    imports,
    plugin: {
      name: 'module-graph',
      buildEnd() {
        for (const id of this.getModuleIds()) {
          const info = this.getModuleInfo(id)
          imports.set(id, { static: info?.importedIds ?? [], dynamic: info?.dynamicallyImportedIds ?? [] })
        }
      },
    },
  }
}

/** The modules `roots` import, directly or not: statically, or also on demand with `dynamic` (not past `stopAt`). */
function closure(imports, roots, { dynamic = false, stopAt = [] } = {}) {
  const seen = new Set()
  const pending = [...roots]
  while (pending.length > 0) {
    const id = pending.pop()
    if (seen.has(id) || stopAt.includes(id)) continue
    seen.add(id)
    const next = imports.get(id)
    pending.push(...(next?.static ?? []), ...(dynamic ? (next?.dynamic ?? []) : []))
  }
  return seen
}

/** The servers' entries in `exports`: every other entry (client, telemetry, adapters, stores, gRPC) is a light one. */
const SERVER_EXPORTS = ['.', './workers']

/**
 * `output.codeSplitting.groups` for the graph `imports` (moduleGraphReader's) of the tsc output in `dist`, the
 * package's `exports` (its manifest's) naming the entries.
 */
export function chunkGroups(imports, dist, exports) {
  const at = (path) => join(dist, path)
  const runtime = closure(imports, [at('index.js')])
  const workers = closure(imports, [at('entries/workers.js')])
  const start = closure(imports, [at('cli/_start.js')])
  // The lighter programs: each a root, and so is each module they load on demand (a command of the CLI, its parts).
  // Read from `exports`, so that an entry added later (an adapter, a store) never loads the server's chunks with it.
  const serverCommands = [at('cli/_start.js'), at('dev/_command.js')]
  const lightExports = Object.entries(exports)
    .filter(([subpath]) => !SERVER_EXPORTS.includes(subpath))
    .map(([, target]) => at(target.default.replace(/^\.\/dist\//, '')))
  const lightRoots = [...lightExports, at('cli/_program.js')]
  for (const id of closure(imports, lightRoots, { dynamic: true, stopAt: serverCommands }))
    for (const lazy of imports.get(id)?.dynamic ?? [])
      if (!serverCommands.includes(lazy) && !lightRoots.includes(lazy)) lightRoots.push(lazy)
  const light = lightRoots.map((root) => closure(imports, [root]))

  const groupOf = new Map()
  /** Each shared group (its name and priority) by who loads its modules. */
  const shared = new Map()
  for (const id of new Set([...runtime, ...start])) {
    const programs = light.flatMap((modules, index) => (modules.has(id) ? [index] : []))
    if (programs.length > 0) {
      const servers = Object.entries({ workers, runtime, start }).filter(([, modules]) => modules.has(id))
      const loadedBy = `${programs.join(',')} ${servers.map(([name]) => name).join(',')}`
      // Loaded by more programs, or by as many and more servers: earlier (see below).
      const priority = 10 + programs.length * 4 + servers.length
      if (!shared.has(loadedBy)) shared.set(loadedBy, { name: `runtime-shared-${shared.size + 1}`, priority })
      groupOf.set(id, shared.get(loadedBy).name)
    } else groupOf.set(id, runtime.has(id) ? (workers.has(id) ? 'runtime' : 'runtime-node') : 'start')
  }
  // A group takes in the imports of its modules that no group took before it (rolldown's groups go by priority,
  // highest first). A module's imports are loaded by the same programs and servers, and maybe more: the groups of
  // more come first, so that each import lands in its own group.
  const groups = [
    ...shared.values(),
    { name: 'runtime', priority: 3 },
    { name: 'runtime-node', priority: 2 },
    { name: 'start', priority: 1 },
  ]
  return groups.map(({ name, priority }) => ({
    name: (id) => (groupOf.get(id) === name ? name : null),
    debugName: name,
    priority,
  }))
}
