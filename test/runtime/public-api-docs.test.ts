import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Node } from 'typescript/unstable/ast'
import type { Checker, Symbol as TsSymbol, Type } from 'typescript/unstable/sync'
import { API, SignatureKind, SymbolFlags } from 'typescript/unstable/sync'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SETTINGS } from '../../runtime/src/settings.ts'

// What an editor shows on hover is the runtime's documentation: every export of every subpath says what it is for,
// and every option says what it does and, when it has one, its default as an `@default` tag (a default left in the
// prose is one no tool can find). The sources are read by TypeScript's own checker, the one that makes the hover
// (TypeScript 7's API, `typescript/unstable/sync`, which runs the compiler as a process of its own): it follows
// re-exports, `extends`, `Omit<…>` and aliases to the declaration whose comment the hover shows.

const root = fileURLToPath(new URL('../..', import.meta.url))
const manifest = JSON.parse(readFileSync(join(root, 'runtime/package.json'), 'utf8'))
const SOURCES = join(root, 'runtime/src/')

/**
 * The options and definitions an agent's author writes: each of their properties is documented, and so is each
 * property of the types those properties take (`card`, `push`, `store`…) and of the options a method of a public
 * type takes (`task.artifact(content, options)`), found by walking the types (`optionProperties`).
 */
const OPTION_ROOTS = [
  'A2AAppOptions',
  'ServeOptions',
  'GrpcServeOptions',
  'ConnectOptions',
  'CallOptions',
  'StreamOptions',
  'OtelTelemetryOptions',
  'MemoryStoreOptions',
  'FileStoreOptions',
  'RedisStoreOptions',
  'PostgresStoreOptions',
  'AgentWorkerOptions',
  'DurableObjectStoreOptions',
  'StoreContractOptions',
  'AiSdkAdapterOptions',
  'MastraAdapterOptions',
  'LangGraphAdapterOptions',
  'AgentDefinition',
]

/**
 * The properties that have a default, by the interface that declares them: a default is part of the API, so losing
 * its tag (or gaining one) is a decision made here. Each was checked against the code that applies it.
 */
const DEFAULTS: Record<string, string> = {
  A2AAppOptions: `allowedHosts auth cardSigning corsOrigins dialect env eventIds logger maxBodyBytesInFlight maxBodySize
    maxPendingResponseBytes maxRunningBytes maxRunningTasks maxStreamBacklogBytes maxStreams maxTaskBytes publicUrl
    shutdownTimeoutMs sseHeartbeatMs store telemetry writeTimeoutMs`,
  AdapterOptions: 'failureReason showToolInput timeoutMs',
  AgentCapabilities: 'pushNotifications streaming',
  AgentCardInput: 'defaultInputModes defaultOutputModes skills version',
  AgentDefinition: 'messageReplies timeoutMs',
  AgentWorkerOptions: 'binding',
  AuthOptions: 'apiKeys bearerTokens',
  ConnectOptions: 'a2aVersion fetch maxMessageBytes',
  OtelTelemetryOptions: 'captureContent maxLinkedTasks',
  ConversationOptions: 'maxBytes maxTasks',
  DurableObjectStoreOptions: 'logger',
  FileStoreOptions: 'logger segmentBytes',
  GrpcServeOptions: 'host port publicAddress',
  LangGraphAdapterOptions: 'keepThreads',
  MemoryStoreOptions: 'endedLogs env eventLogBytes maxBytes maxTasks ttlMs',
  OidcOptions: 'algorithms audience clockToleranceSeconds issuer requiredScopes',
  PushOptions: 'allow allowHttp maxConcurrent maxConfigsPerTask retries retryDelayMs timeoutMs',
  PostgresStoreOptions: 'keepInstantLogs leaseMs migrate poolSize schema timeoutMs',
  RedisStoreOptions: 'cluster leaseMs prefix timeoutMs',
  SharedStoreOptions: 'env eventLogBytes logger maxTasks pushConfigKey ttlMs',
  ServeOptions: `grpcPort grpcPublicAddress handleSignals headersTimeoutMs hostname keepAliveTimeoutMs maxConnections maxConnectionsPerAddress
    port requestLogLevel requestTimeoutMs`,
}

/** A comment that speaks of a default must give it as a tag. */
const SPEAKS_OF_DEFAULT = /\bdefault\b/i
/** How the prose used to state a default ("Default: …", "Default 10,000."): with a tag, that would say it twice. */
const STATES_DEFAULT = /\bDefault\b/

let api: API
let checker: Checker

/** A documented declaration: where it is, what its comment says, and its `@default` tag's text if it has one. */
interface Documented {
  where: string
  /** `Interface.property` where it is declared, the same however many options inherit it. */
  declared: string
  doc: string
  defaults: string[]
}

/**
 * `Interface.property` as declared. A property an option takes through `Omit<…>` is the checker's copy, which
 * has no parent: its declaration's own symbol has.
 */
function declaredAs(symbol: TsSymbol): string {
  const declaration = symbol.declarations[0]?.resolve() as { name?: Node } | undefined
  const original = symbol.getParent() ? symbol : declaration?.name && checker.getSymbolAtLocation(declaration.name)
  return `${original?.getParent()?.name}.${symbol.name}`
}

const documented = (where: string, symbol: TsSymbol): Documented => ({
  where,
  declared: declaredAs(symbol),
  doc: symbol.getDocumentationComment(checker).trim(),
  defaults: symbol
    .getJsDocTags(checker)
    .filter((tag) => tag.name === 'default')
    .map((tag) => tag.text?.trim() ?? ''),
})

const declaredInRuntime = (symbol: TsSymbol | undefined): boolean => {
  const declarations = symbol?.declarations ?? []
  return declarations.length > 0 && declarations.every(({ path }) => path.startsWith(SOURCES))
}

/** The symbol that names a type: its alias (`type AiSdkAdapterOptions = …`), else its own. */
const symbolOf = (type: Type): TsSymbol | undefined => type.getAliasSymbol() ?? type.getSymbol()
const isOptions = (type: Type): boolean => /Options$/.test(symbolOf(type)?.name ?? '')
/** A type of the runtime's own, or an object type written in place (`provider?: { organization: string }`). */
const ownType = (type: Type): boolean => {
  const symbol = symbolOf(type)
  return declaredInRuntime(symbol) || (symbol !== undefined && (symbol.flags & SymbolFlags.TypeLiteral) !== 0)
}

/** Each subpath's exports as the declarations they name (`export { x } from` followed to `x`). */
function subpathExports(): Map<string, Map<string, TsSymbol>> {
  const config = join(root, 'runtime/tsconfig.build.json')
  const project = api.updateSnapshot({ openProject: config }).getProject(config)!
  checker = project.checker
  const bySubpath = new Map<string, Map<string, TsSymbol>>()
  const targets = manifest.exports as Record<string, { default: string }>
  for (const [subpath, target] of Object.entries(targets)) {
    const entry = join(root, 'runtime', target.default.replace('./dist/', 'src/').replace(/\.js$/, '.ts'))
    const module = checker.getSymbolAtLocation(project.program.getSourceFile(entry)!)!
    const exports = new Map<string, TsSymbol>()
    for (const symbol of checker.getExportsOfModule(module)) {
      exports.set(symbol.name, symbol.flags & SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol)
    }
    bySubpath.set(subpath, exports)
  }
  return bySubpath
}

/** The object types a type is made of: union and intersection members, type arguments (`TaskStore[]`), itself. */
function objectTypesIn(type: Type | undefined, found: Type[] = []): Type[] {
  if (type === undefined) return found
  if (type.isUnionType() || type.isIntersectionType()) {
    for (const member of type.getTypes()) objectTypesIn(member, found)
    return found
  }
  if (type.isTypeReference()) for (const argument of checker.getTypeArguments(type)) objectTypesIn(argument, found)
  if (type.isObjectType()) found.push(type)
  return found
}

/**
 * Every property whose comment the options need, by path (`A2AAppOptions.push.retries`): the roots' properties,
 * the properties of the runtime's types those properties take (not functions: a callback's parameters are the
 * runtime's to give), and the properties of every `…Options` type a method of any type on the way takes.
 */
function optionProperties(roots: Map<string, TsSymbol>): Documented[] {
  const properties: Documented[] = []
  const checked = new Set<number>()
  const seen = new Set<number>()
  const walk = (type: Type, where: string, check: boolean): void => {
    if (checked.has(type.id) || (!check && seen.has(type.id))) return
    ;(check ? checked : seen).add(type.id)
    for (const property of checker.getPropertiesOfType(type)) {
      if (!declaredInRuntime(property)) continue
      const path = `${where}.${property.name}`
      if (check) properties.push(documented(path, property))
      for (const part of objectTypesIn(checker.getTypeOfSymbol(property))) {
        const signatures = checker.getSignaturesOfType(part, SignatureKind.Call)
        if (signatures.length === 0 && ownType(part)) walk(part, path, check || isOptions(part))
        for (const parameter of signatures.flatMap((signature) => signature.getParameters())) {
          for (const taken of objectTypesIn(checker.getTypeOfSymbol(parameter))) {
            if (declaredInRuntime(symbolOf(taken))) walk(taken, `${path}(${parameter.name})`, isOptions(taken))
          }
        }
      }
    }
  }
  for (const [name, symbol] of roots) walk(checker.getDeclaredTypeOfSymbol(symbol), name, true)
  return properties
}

/** What is wrong with one property's comment, or nothing. */
function problemOf({ doc, defaults }: Documented): string | undefined {
  if (doc === '') return 'no comment'
  if (defaults.length > 1) return 'more than one @default'
  if (defaults.length === 0) return SPEAKS_OF_DEFAULT.test(doc) ? 'speaks of a default, with no @default' : undefined
  if (defaults[0] === '') return 'an empty @default'
  if (STATES_DEFAULT.test(doc)) return 'states its default in the prose as well as in @default'
  return undefined
}

describe('the documentation of the public API', () => {
  let exports: Map<string, Map<string, TsSymbol>>
  let options: Documented[]

  beforeAll(() => {
    api = new API({ cwd: join(root, 'runtime') })
    exports = subpathExports()
    const exported = [...exports.values()].flatMap((names) => [...names])
    options = optionProperties(new Map(exported.filter(([name]) => OPTION_ROOTS.includes(name))))
  })
  afterAll(() => api?.close())

  it('every export of every subpath has a comment', () => {
    expect(exports.size).toBe(Object.keys(manifest.exports).length)
    expect([...exports.values()].filter((names) => names.size === 0)).toEqual([])
    const undocumented = [...exports].flatMap(([subpath, names]) =>
      [...names].filter(([name, symbol]) => documented(name, symbol).doc === '').map(([name]) => `${subpath}: ${name}`),
    )
    expect(undocumented).toEqual([])
  })

  it('finds every option root among the exports, and every exported …Options type is a root', () => {
    const exported = new Set([...exports.values()].flatMap((names) => [...names.keys()]))
    expect(OPTION_ROOTS.filter((name) => !exported.has(name))).toEqual([])
    expect([...exported].filter((name) => /Options$/.test(name) && !OPTION_ROOTS.includes(name))).toEqual([])
  })

  it('walks into the types the options take and the options public methods take', () => {
    const paths = options.map((property) => property.where)
    // One of each way in: a nested option, a type of the runtime's, an option of a method, an inherited property.
    expect(paths).toEqual(
      expect.arrayContaining([
        'A2AAppOptions.push.retries',
        'AgentDefinition.card.capabilities.streaming',
        'AgentDefinition.execute(task).artifact(options).append',
        'AgentWorkerOptions.maxRunningBytes',
        'FileStoreOptions.ttlMs',
      ]),
    )
  })

  it('every property of the options has a comment, and a default it has is an @default tag', () => {
    const problems = options.flatMap((property) => {
      const problem = problemOf(property)
      return problem ? [`${property.where}: ${problem}`] : []
    })
    expect(problems).toEqual([])
  })

  it('the properties with an @default are exactly the ones listed', () => {
    const tagged = new Set(options.filter(({ defaults }) => defaults.length > 0).map(({ declared }) => declared))
    const qualified = ([owner, names]: [string, string]) =>
      names
        .trim()
        .split(/\s+/)
        .map((name) => `${owner}.${name}`)
    const listed = Object.entries(DEFAULTS).flatMap(qualified)
    expect([...tagged].sort()).toEqual(listed.sort())
  })

  it('an option the environment sets names its variable in its @default, and no variable the runtime lacks', () => {
    const capitals = (text: string) => text.match(/\b[A-Z][A-Z0-9_]+\b/g) ?? []
    const named = new Set(options.flatMap(({ defaults }) => defaults.flatMap(capitals)))
    // Every variable an option overrides (the a2a command's own flags aside) is in some option's @default.
    const settable = SETTINGS.filter(({ option }) => !option.startsWith('-')).map(({ variable }) => variable)
    expect(settable.filter((variable) => !named.has(variable))).toEqual([])
    const variables = new Set<string>(SETTINGS.map(({ variable }) => variable))
    expect([...named].filter((name) => name.startsWith('A2A_') && !variables.has(name))).toEqual([])
  })
})
