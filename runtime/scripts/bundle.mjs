// Bundles the JavaScript tsc wrote to dist/ (run from the package's directory, after tsc): a cold start of
// `a2a start` spent about 110 ms of Node 20's time opening, reading and linking some 190 modules one at a time.
// Each entry file (every `exports` subpath and the modules bin/ imports) keeps its path, so the package's manifest
// and bin/ are unchanged; the modules they share go into chunks (_chunk-groups.mjs: the server's own in a few large
// ones), and what is imported on demand (each command, gRPC, jose) stays in chunks of its own, loaded when it is now.
// Every package is left out (dependencies, optional peers, node: builtins): they are installed beside the runtime,
// and the optional ones are still loaded only when used; but h3 and rou3 (BUNDLED_PACKAGES) are bundled in.
// tsc's .d.ts files stay where they are, next to the entries.
// The output dir is given for a build into another folder (`node scripts/bundle.mjs <dist>`), dist/ otherwise.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { rolldown } from 'rolldown'
import { chunkGroups, moduleGraphReader } from './_chunk-groups.mjs'

const dist = resolve(process.argv[2] ?? 'dist')
const manifest = JSON.parse(readFileSync('package.json', 'utf8'))

/**
 * Modules loaded by a path the bundler cannot follow, kept at their paths: grpc/serve-grpc.ts imports the gRPC
 * server through a name held in a constant, so that a user's bundler (a Worker's) never follows it into the optional
 * gRPC packages, and finds it from the package's root.
 */
const LOADED_BY_PATH = ['grpc/_server.js']

/**
 * Packages bundled into the runtime's chunks instead of being imported from node_modules: a cold start of
 * `a2a start` read h3's 8 files and rou3's 87 KB one by one (6 ms of Node 20's start, paired rounds). Only those the
 * same on every runtime: h3's entries differ by export condition (node, bun, deno, workerd) in `serve` and
 * `toNodeHandler` alone, which the bundled code keeps importing from srvx by its own conditions; srvx itself
 * (FastResponse is the Node adapter's class on Node and the platform's Response elsewhere) stays external. h3 stays
 * a dependency all the same: the types (`app.h3`) name it, and users mount the app in their own h3 app. Each chunk
 * holding their code carries their licence (MIT) in a comment.
 */
const BUNDLED_PACKAGES = ['h3', 'rou3']

/** The entry files: what `exports` names, what bin/'s scripts import from dist/, and LOADED_BY_PATH. */
function entryFiles() {
  const fromExports = Object.values(manifest.exports).map((target) => target.default)
  const fromBin = Object.values(manifest.bin).flatMap((bin) =>
    [...readFileSync(bin, 'utf8').matchAll(/['"]\.\.\/dist\/([^'"]+\.js)['"]/g)].map((match) => match[1]),
  )
  const paths = [...fromExports.map((path) => path.replace(/^\.\/dist\//, '')), ...fromBin, ...LOADED_BY_PATH]
  return Object.fromEntries([...new Set(paths)].map((path) => [path.replace(/\.js$/, ''), join(dist, path)]))
}

/** The .js files tsc wrote (the page vite builds into dist/inspector comes later and is not ours to touch). */
function emittedScripts(folder) {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.js'))
    .map((entry) => join(entry.parentPath, entry.name))
}

/** `h3/node` → `h3`, `@scope/name/sub` → `@scope/name`. */
function packageName(specifier) {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

const requireHere = createRequire(resolve('package.json'))

/**
 * Code h3 inlines from other packages into its own dist (their notices in its dist/THIRD-PARTY-LICENSES.md.gz, which
 * the chunks do not carry), by names found in that code alone: cookie-es's cookie parsing and serializing (fetchdts,
 * the other one, is in h3's types only). The runtime uses none of it today, and the bundle drops it; a chunk that
 * held any fails the build (below), to add those notices first.
 */
const H3_INLINED = {
  'cookie-es': ['COOKIE_MAX_AGE_LIMIT', 'eqIndex', 'valueSlice', 'cookieNameRegExp', 'parseSetCookie'],
}

/** Throws if a chunk (`code`, from `moduleIds`) holds code h3 inlines, or h3's own code no longer has the names. */
function assertNoH3InlinedCode(fileName, moduleIds, code) {
  if (!moduleIds.some((id) => id.includes('/node_modules/h3/'))) return
  const h3Code = readFileSync(join(dirname(requireHere.resolve('h3/package.json')), 'dist/h3.mjs'), 'utf8')
  for (const [name, markers] of Object.entries(H3_INLINED)) {
    const gone = markers.filter((marker) => !h3Code.includes(marker))
    if (gone.length > 0)
      throw new Error(`h3's dist/h3.mjs no longer has ${name}'s ${gone.join(', ')}: update H3_INLINED`)
    const found = markers.filter((marker) => code.includes(marker))
    if (found.length > 0) {
      const notice = "its notice from h3's dist/THIRD-PARTY-LICENSES.md.gz"
      throw new Error(`${fileName} holds ${name}'s code, which h3 inlines (${found.join(', ')}): add ${notice}`)
    }
  }
}

/** The licence of each bundled package whose modules a chunk holds (`moduleIds`), as a comment to put on top. */
function licenceComments(moduleIds) {
  return BUNDLED_PACKAGES.filter((name) => moduleIds.some((id) => id.includes(`/node_modules/${name}/`)))
    .map((name) => {
      const root = dirname(requireHere.resolve(`${name}/package.json`))
      const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
      const licence = readFileSync(join(root, 'LICENSE'), 'utf8').trim().replaceAll('*/', '* /')
      const lines = licence.split('\n').map((line) => ` * ${line}`.trimEnd())
      return `/*!\n * ${name} ${version}, bundled into a2a-runtime. Its licence:\n *\n${lines.join('\n')}\n */\n`
    })
    .join('')
}

const input = entryFiles()
const inputOptions = {
  input,
  platform: 'node',
  // Only our own modules (relative paths) and BUNDLED_PACKAGES are bundled; any other bare specifier is a package,
  // installed for the user.
  external: (id, importer) =>
    importer !== undefined && !id.startsWith('.') && !isAbsolute(id) && !BUNDLED_PACKAGES.includes(packageName(id)),
  logLevel: 'warn',
  plugins: [
    {
      // h3's own entry: the generic one, whatever the platform. The entries differ only in `serve` and in what they
      // import for it from srvx (the node entry: srvx/node, which would then sit in a chunk a Worker loads too).
      // `h3/node`, for toNodeHandler, is still the node entry, which Node's servers alone load.
      name: 'h3-generic-entry',
      resolveId(source, importer, options) {
        if (source === 'h3') return this.resolve('h3/generic', importer, { ...options, skipSelf: true })
      },
    },
  ],
}
// A first pass reads the module graph, which the second's chunks are drawn from.
const graph = moduleGraphReader()
const first = await rolldown({ ...inputOptions, plugins: [...inputOptions.plugins, graph.plugin] })
await first.generate({ format: 'esm' })
await first.close()
const bundle = await rolldown(inputOptions)
const { output } = await bundle.generate({
  format: 'esm',
  entryFileNames: '[name].js',
  chunkFileNames: '_chunks/[name]-[hash].js',
  codeSplitting: { groups: chunkGroups(graph.imports, dist, manifest.exports) },
  // No minifying: stack traces and a reader of the installed package see the runtime's own names.
  minify: false,
})
await bundle.close()

for (const file of emittedScripts(dist)) rmSync(file)
for (const chunk of output) {
  if (chunk.type !== 'chunk') throw new Error(`unexpected asset in the bundle: ${chunk.fileName}`)
  assertNoH3InlinedCode(chunk.fileName, chunk.moduleIds, chunk.code)
  const file = join(dist, chunk.fileName)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, licenceComments(chunk.moduleIds) + chunk.code)
}
for (const [name, file] of Object.entries(input)) {
  if (!output.some((chunk) => chunk.fileName === `${name}.js`)) throw new Error(`entry ${relative(dist, file)} missing`)
}
console.log(`bundled ${Object.keys(input).length} entries into ${output.length} files`)
