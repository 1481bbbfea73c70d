import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

// The runtime's public API, pinned before its first release: once published, removing an export is a breaking
// change, so adding one is a decision made here, not an accident of an `export` keyword. The root holds what an
// agent's author uses; extras are subpaths, each with its own list below.

const root = fileURLToPath(new URL('../..', import.meta.url))
const exec = promisify(execFile)
const manifest = JSON.parse(readFileSync(join(root, 'runtime/package.json'), 'utf8'))

const PUBLIC_API: Record<string, { values: string[]; types: string[] }> = {
  '.': {
    values: [
      'TaskNotCancelableError',
      'TaskTerminalError',
      'createA2AApp',
      'createAgentsApp',
      'createMemoryStore',
      'defineAgent',
      'serveAgent',
      'serveAgents',
    ],
    types: [
      'A2AAgentsApp',
      'A2AAgentsServer',
      'A2AApp',
      'A2AAppOptions',
      'A2AServer',
      'Agent',
      'AgentCard',
      'AgentCoreRequest',
      'AgentDefinition',
      'AgentEntry',
      'AgentSkill',
      'Artifact',
      'ExecutionContext',
      'Logger',
      'MemoryStoreOptions',
      'Message',
      'Part',
      'Principal',
      'ServeOptions',
      'Task',
      'TaskHandle',
      'TaskState',
    ],
  },
  './workers': {
    values: ['agentWorker', 'createDurableObjectStore'],
    types: [
      'AgentWorker',
      'AgentWorkerOptions',
      'DurableObjectStateLike',
      'DurableObjectStorageLike',
      'DurableObjectStoreOptions',
    ],
  },
  './file-store': { values: ['createFileStore'], types: ['FileStoreOptions'] },
  './redis-store': { values: ['createRedisStore'], types: ['RedisStoreOptions'] },
  './postgres-store': {
    values: ['createPostgresStore', 'migratePostgresStore'],
    types: ['PostgresStoreOptions', 'PostgresTaskStore'],
  },
  './grpc': { values: ['serveGrpc'], types: ['GrpcServeOptions', 'GrpcServer'] },
  './client': {
    values: ['A2AClientFailure', 'A2AProtocolError', 'connect'],
    types: [
      'A2AClient',
      'A2AClientFailureKind',
      'A2AErrorName',
      'AgentCard',
      'AgentInterface',
      'Artifact',
      'AuthenticationInfo',
      'CallOptions',
      'ConnectOptions',
      'JsonObject',
      'JsonValue',
      'ListTasksRequest',
      'ListTasksResponse',
      'Message',
      'Part',
      'SendMessageConfiguration',
      'SendMessageRequest',
      'SendMessageResponse',
      'StreamEvent',
      'StreamOptions',
      'StreamResponse',
      'Task',
      'TaskArtifactUpdateEvent',
      'TaskPushNotificationConfig',
      'TaskState',
      'TaskStatus',
      'TaskStatusUpdateEvent',
      'WireEntry',
      'WireHook',
    ],
  },
  './telemetry': { values: ['otelTelemetry'], types: ['OtelTelemetryOptions', 'Telemetry'] },
  './store': {
    values: ['InvalidParamsError', 'TaskNotFoundError', 'taskStoreContract'],
    types: [
      'ClusterLink',
      'MaybePromise',
      'PushConfig',
      'PushConfigStore',
      'StoreCheck',
      'StoreContractOptions',
      'TaskEvent',
      'TaskPage',
      'TaskQuery',
      'TaskStore',
    ],
  },
  './ai-sdk': { values: ['askUserTool', 'fromAiSdk'], types: ['AiSdkAdapterOptions', 'AiSdkAgent'] },
  './mastra': { values: ['askUserTool', 'fromMastra'], types: ['MastraAdapterOptions', 'MastraAgent'] },
  './langgraph': { values: ['fromLangGraph'], types: ['LangGraphAdapterOptions', 'LangGraphAgent'] },
}

/** The source file a subpath is built from (`./dist/entries/workers.js` → `runtime/src/entries/workers.ts`). */
function sourceOf(subpath: string): string {
  return join(
    root,
    'runtime',
    (manifest.exports[subpath].default as string).replace('./dist/', 'src/').replace(/\.js$/, '.ts'),
  )
}

/** Names an entry file exports, by kind: its re-export lists and its own exported declarations. */
function exportedNames(file: string): { values: string[]; types: string[] } {
  const source = readFileSync(file, 'utf8')
  const values: string[] = []
  const types: string[] = []
  for (const [, type, list] of source.matchAll(/^export (type )?\{([^}]*)\} from /gm)) {
    for (const name of list!
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean)) {
      if (type || name.startsWith('type ')) types.push(name.replace(/^type /, ''))
      else values.push(name)
    }
  }
  for (const [, kind, name] of source.matchAll(
    /^export (?:declare )?(?:async )?(function|const|let|class|interface|type) (\w+)/gm,
  )) {
    ;(kind === 'interface' || kind === 'type' ? types : values).push(name!)
  }
  expect(source, `${file}: every export is a list or a declaration this test reads`).not.toMatch(
    /^export (\*|default)/m,
  )
  return { values: values.sort(), types: types.sort() }
}

/** The text of every fenced code block in a Markdown file. */
function codeBlocks(file: string): string {
  return [...readFileSync(join(root, file), 'utf8').matchAll(/^```\w*\n([\s\S]*?)^```/gm)]
    .map(([, code]) => code)
    .join('\n')
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) =>
    statSync(join(dir, name)).isDirectory() ? filesUnder(join(dir, name)) : [join(dir, name)],
  )
}

describe('the public API of a2a-runtime', () => {
  it('has exactly the subpaths listed here, each built from its own entry file', () => {
    expect(Object.keys(manifest.exports).sort()).toEqual(Object.keys(PUBLIC_API).sort())
  })

  it.each(Object.keys(PUBLIC_API))('%s exports exactly its listed values and types', async (subpath) => {
    const expected = PUBLIC_API[subpath]!
    expect(exportedNames(sourceOf(subpath))).toEqual({
      values: [...expected.values].sort(),
      types: [...expected.types].sort(),
    })
    // The values as a program sees them: the module's keys at run time.
    const specifier = subpath === '.' ? 'a2a-runtime' : `a2a-runtime${subpath.slice(1)}`
    expect(Object.keys(await import(/* @vite-ignore */ specifier)).sort()).toEqual([...expected.values].sort())
  })

  it('every root export is used by an example of the README or by a generated project', () => {
    const used = [
      codeBlocks('README.md'),
      codeBlocks('runtime/README.md'),
      ...filesUnder(join(root, 'generator/templates')).map((file) => readFileSync(file, 'utf8')),
    ].join('\n')
    const { values, types } = PUBLIC_API['.']!
    expect([...values, ...types].filter((name) => !new RegExp(`\\b${name}\\b`).test(used))).toEqual([])
  })

  it('keeps ioredis an optional peer: an agent that does not use Redis installs none', () => {
    expect(manifest.dependencies.ioredis).toBeUndefined()
    expect(manifest.peerDependencies.ioredis).toBeDefined()
    expect(manifest.peerDependenciesMeta.ioredis).toEqual({ optional: true })
  })

  it("keeps gRPC's packages optional peers: an agent that does not serve gRPC installs none", () => {
    for (const peer of ['@grpc/grpc-js', '@bufbuild/protobuf']) {
      expect(manifest.dependencies[peer]).toBeUndefined()
      expect(manifest.peerDependencies[peer]).toBeDefined()
      expect(manifest.peerDependenciesMeta[peer]).toEqual({ optional: true })
    }
  })

  it('type-checks the tests against the same entry files (tsconfig paths follow the exports)', () => {
    const tsconfig = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'))
    const expected = Object.fromEntries(
      Object.keys(manifest.exports).map((subpath) => [
        subpath === '.' ? 'a2a-runtime' : `a2a-runtime${subpath.slice(1)}`,
        [`./${sourceOf(subpath).slice(root.length)}`],
      ]),
    )
    expect(tsconfig.compilerOptions.paths).toEqual(expected)
  })
})

describe('the README example of the API at a glance', () => {
  it('type-checks against the runtime as it is (strict, no unused names)', async () => {
    const readme = readFileSync(join(root, 'runtime/README.md'), 'utf8')
    const section = readme.slice(readme.indexOf('### The API at a glance'))
    const example = /^```ts\n([\s\S]*?)^```/m.exec(section)![1]!
    const dir = mkdtempSync(join(tmpdir(), 'a2a-api-example-'))
    try {
      // An ES module (top-level await), resolved as the repository's tests are: the runtime's sources.
      writeFileSync(join(dir, 'example.mts'), example)
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          extends: join(root, 'tsconfig.json'),
          compilerOptions: { rootDir: '/', typeRoots: [join(root, 'node_modules/@types')] },
          include: [],
          files: ['example.mts'],
        }),
      )
      const checked = await exec(join(root, 'node_modules/.bin/tsc'), ['--noEmit', '-p', dir]).then(
        () => '',
        (error: { stdout: string }) => error.stdout,
      )
      // Only the example's own errors: the runtime's are `npm run typecheck`'s to report.
      expect(checked.split('\n').filter((line) => line.includes('example.mts'))).toEqual([])
      expect(checked).not.toMatch(/TS\d+: .*(example|tsconfig)/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
