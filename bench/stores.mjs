// `npm run stores` (in bench/, after a build) / `node bench/stores.mjs [--quick] [--runtime <dist/index.js>] [--label
// <text>] [--dir <parent>] [--out <dir>] [--no-pin]`
//
// The task stores at scale (memory, file, Redis, PostgreSQL), each measure against a fresh store and fresh server
// processes:
//   1. ListTasks latency with 10,000 and 100,000 tasks in the store;
//   2. bytes a store writes for a 1 MiB message answered in 1,000 streamed chunks (Redis, PostgreSQL, file);
//   3. message/send c=16 throughput on the file store, on Redis and on PostgreSQL as a ratio to the memory store,
//      and spread over two instances on one Redis and on one PostgreSQL database;
//   4. how long an event takes to reach a client that follows the task on another instance (Redis, PostgreSQL).
// Redis and PostgreSQL are private servers of the bench's, a fresh one per measure (_redis.mjs, _postgres.mjs).
// The PostgreSQL parts need Debian's postgresql package and a runtime build with the PostgreSQL store; without
// either they are skipped and the run says so (and exits non-zero: its goals have no figure).
// Writes a Markdown report (and the raw numbers as JSON) to bench/results/<stamp>-stores.md and prints it.
// --quick: every part, small, in well under a minute, report in a temporary directory. Exits non-zero when a
// server answers wrongly or a goal has no figure.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { watchForeignLoad } from './_foreign-load.mjs'
import { backgroundLoad, describeMachine } from './_machine.mjs'
import { postgresAvailable, postgresVersion, startPostgres } from './_postgres.mjs'
import { pinningSupport } from './_processes.mjs'
import { repoRoot } from './_project.mjs'
import { publishReport, runAndExit, runCleanups, stamp } from './_publish.mjs'
import { redisVersion, startRedis } from './_redis.mjs'
import { verify } from './_server.mjs'
import { median } from './_stats.mjs'
import { bigText, fileBytes, postgresBytes, redisBytes } from './_store-bytes.mjs'
import { followLatency } from './_store-follow.mjs'
import { listLatency } from './_store-list.mjs'
import { evaluateStoreGoals, renderStoreReport, STORES } from './_store-report.mjs'
import { fillStore, launchStoreAgent } from './_store-servers.mjs'
import { sendLoad } from './_store-throughput.mjs'
import { targets } from './_targets.mjs'

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    runtime: { type: 'string' },
    label: { type: 'string' },
    dir: { type: 'string' },
    out: { type: 'string' },
    'no-pin': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (flags.help) {
  console.log(
    'node bench/stores.mjs [--quick] [--runtime <runtime/dist/index.js>] [--label <what the report calls that build>] [--dir <parent of the file stores>] [--out <report dir>] [--no-pin]',
  )
  process.exit(0)
}

// A full run on 2 cores: filling is most of it (the file and PostgreSQL stores commit each task as it is created
// and as it ends), then 3 x 220 ListTasks calls per store and size, 4 rounds of 6 throughput runs (an even
// number: each pair of neighbours runs in both orders as often), three byte measures and 2 x 100 followed tasks:
// about 15 minutes.
const profile = flags.quick
  ? {
      listSizes: [200, 1_000],
      listWarmup: 2,
      listCalls: 10,
      bytesText: 1024 * 1024,
      bytesChunks: 1000,
      rounds: 2,
      durationSec: 1,
      warmupSec: 0.3,
      connections: 16,
      maxRequests: 1_000_000,
      followSamples: 5,
    }
  : {
      listSizes: [10_000, 100_000],
      listWarmup: 20,
      listCalls: 200,
      bytesText: 1024 * 1024,
      bytesChunks: 1000,
      rounds: 4,
      durationSec: 4,
      warmupSec: 2,
      connections: 16,
      maxRequests: 5_000_000,
      followSamples: 100,
    }
// Above the largest fill, so neither the count nor the bytes evict a task while the measure runs.
const maxTasks = profile.listSizes.at(-1) * 2
const failedIn = (count) => Math.floor(count / 10) // the fill asks every tenth task to fail
const runtimeEntry = flags.runtime && resolve(flags.runtime)
if (runtimeEntry && !existsSync(runtimeEntry)) throw new Error(`--runtime: no such file: ${flags.runtime}`)
if (!runtimeEntry && !existsSync(join(repoRoot, 'runtime/dist/index.js')))
  throw new Error('runtime/dist/index.js is missing: build the runtime first (npm run build)')
/** Why the PostgreSQL parts cannot run (no server installed, a build without the store), or undefined. */
const postgresMissing = !postgresAvailable()
  ? 'PostgreSQL is not installed (Debian: apt-get install postgresql)'
  : !existsSync(join(dirname(runtimeEntry ?? join(repoRoot, 'runtime/dist/index.js')), 'entries/postgres-store.js'))
    ? 'the runtime build has no PostgreSQL store (entries/postgres-store.js)'
    : undefined
const SQL_STORES = postgresMissing ? [] : ['postgres']

const began = performance.now()
const log = (line) => process.stderr.write(`[stores ${Math.round((performance.now() - began) / 1000)} s] ${line}\n`)
const { add: afterRun, cleanup } = runCleanups(log)
const echo = { name: 'store agent', dialect: targets.ours.dialect }

function fileSystemOf(dir) {
  return (
    spawnSync('df', ['--output=fstype', dir], { encoding: 'utf8' }).stdout?.trim().split('\n').at(-1) ||
    'unknown file system'
  )
}

/** A directory of its own for one file store, deleted at the end. */
function freshDir(parent, name) {
  const dir = mkdtempSync(join(parent, `a2a-stores-${name}-`))
  afterRun(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A fresh PostgreSQL cluster on CPU 1 (its folder beside the file stores'), removed at the end whatever happens. */
async function freshPostgres({ pinning, parent }, name) {
  const pg = await startPostgres({ pinning, core: 1, name, parent })
  afterRun(() => rmSync(dirname(pg.dir), { recursive: true, force: true }))
  return pg
}

/** A fresh server for a shared store: redis-server or a PostgreSQL cluster, both on CPU 1. */
const freshBackend = (store, context, name = store) =>
  store === 'postgres' ? freshPostgres(context, name) : startRedis({ pinning: context.pinning, core: 1, name })

/** Starts the agent and checks it answers a send and a stream correctly before anything is measured. */
async function agentOn(name, options, context) {
  const server = await launchStoreAgent(name, { ...options, runtimeEntry }, context)
  await verify({ ...echo, name }, server)
  return server
}

/** Part 1, one store: the list measures at each size, the store growing from one size to the next. */
async function listRun(store, { pinning, parent }) {
  const rows = {}
  let backend
  let setting
  if (store === 'memory') setting = 'memory'
  else if (store === 'file') setting = `file:${freshDir(parent, 'list')}`
  else {
    backend = await freshBackend(store, { pinning, parent })
    setting = backend.url
  }
  try {
    let filled = 0
    for (const size of profile.listSizes) {
      const step = store === 'memory' ? size : size - filled
      log(`list: ${store}, filling ${size.toLocaleString('en-US')} tasks`)
      const fillStarted = performance.now()
      let fill
      if (store !== 'memory') fill = await fillStore({ store: setting, maxTasks, runtimeEntry }, step)
      // As after any bulk load: the rows' visibility settled and the planner's statistics taken now, not by an
      // autovacuum that would run on CPU 1 while the calls are timed (it added up to a millisecond a call).
      if (store === 'postgres') await backend.query('VACUUM (ANALYZE)')
      const started = performance.now()
      // Not verified with a send: it would add a task to the count the pages are checked against.
      const server = await launchStoreAgent(
        store,
        { store: setting, maxTasks, runtimeEntry, ...(store === 'memory' && { fill: size }) },
        { pinning, readyTimeoutMs: 1_800_000 },
      )
      const readySec = (performance.now() - started) / 1000
      fill ??= server.fill
      filled = store === 'memory' ? size : filled + step
      try {
        const latency = await listLatency(server.url, {
          total: filled,
          failed: failedIn(store === 'memory' ? size : filled),
          warmup: profile.listWarmup,
          calls: profile.listCalls,
        })
        rows[size] = {
          latency,
          fillSec: fill.fillSec,
          fillRate: step / fill.fillSec,
          fillWallSec: (started - fillStarted) / 1000,
          readySec,
        }
        log(
          `list: ${store} at ${size.toLocaleString('en-US')}: first page p50 ${latency.first.p50.toFixed(2)} ms, filter ${latency.filtered.p50.toFixed(2)} ms, second page ${latency.next.p50.toFixed(2)} ms`,
        )
      } finally {
        await server.stop()
      }
    }
  } finally {
    await backend?.stop()
  }
  return rows
}

/** Part 2: Redis, PostgreSQL and file, each a fresh store and server. */
async function bytesRun({ pinning, parent }) {
  log(`bytes: one large streamed answer on Redis, ${SQL_STORES.length ? 'PostgreSQL, ' : ''}then on a file store`)
  const text = bigText(profile.bytesText)
  const warm = { text: bigText(64 * 1024), chunks: profile.bytesChunks }
  const measure = { text, chunks: profile.bytesChunks }
  const base = 2 * Buffer.byteLength(text)
  const out = {}
  const redis = await startRedis({ pinning, core: 1 })
  try {
    // Checked by the warm-up send instead of a "hi" (this agent echoes in chunks): the whole echo, and GetTask.
    const server = await launchStoreAgent(
      'redis bytes',
      { store: redis.url, chunks: profile.bytesChunks, runtimeEntry },
      { pinning },
    )
    try {
      await redisBytes(server, redis, warm)
      const r = await redisBytes(server, redis, measure)
      out.redis = { ...r, base, ratio: r.written / base }
    } finally {
      await server.stop()
    }
  } finally {
    await redis.stop()
  }
  if (SQL_STORES.length) {
    const pg = await freshPostgres({ pinning, parent }, 'postgres bytes')
    try {
      const server = await launchStoreAgent(
        'postgres bytes',
        { store: pg.url, chunks: profile.bytesChunks, runtimeEntry },
        { pinning },
      )
      try {
        await postgresBytes(server, pg, warm)
        const r = await postgresBytes(server, pg, measure)
        out.postgres = { ...r, base, ratio: r.written / base }
      } finally {
        await server.stop()
      }
    } finally {
      await pg.stop()
    }
  }
  const dir = freshDir(parent, 'bytes')
  const server = await launchStoreAgent(
    'file bytes',
    { store: `file:${dir}`, chunks: profile.bytesChunks, runtimeEntry },
    { pinning },
  )
  try {
    await fileBytes(server, dir, warm)
    const r = await fileBytes(server, dir, measure)
    out.file = { ...r, base, ratio: r.written / base }
  } finally {
    await server.stop()
  }
  const pgLine = out.postgres ? `, postgres ${out.postgres.ratio.toFixed(2)}x (WAL)` : ''
  log(`bytes: redis ${out.redis.ratio.toFixed(2)}x${pgLine}, file ${out.file.ratio.toFixed(2)}x of message + answer`)
  return out
}

/**
 * Part 3 (and part 4's throughput): rounds over memory, PostgreSQL, file, Redis, and two instances on one Redis and
 * on one PostgreSQL database. PostgreSQL runs next to memory, so its paired ratio compares neighbours, each order
 * as often (the rounds alternate the order, and there is an even number of them).
 */
async function throughputRun(context) {
  log('send: starting the servers')
  const backends = []
  const servers = []
  const backend = async (store, name) => {
    const started = await freshBackend(store, context, name)
    backends.push(started)
    return started
  }
  try {
    const start = async (name, store) => {
      const server = await agentOn(name, { store }, context)
      servers.push(server)
      return server
    }
    const group = async (store, names) => {
      const shared = await backend(store, `${store} (${names.length === 1 ? 'one instance' : 'two instances'})`)
      const started = []
      for (const name of names) started.push(await start(name, shared.url))
      return { servers: started, backend: shared }
    }
    const groups = {
      memory: { servers: [await start('memory', 'memory')] },
      ...(SQL_STORES.length && { postgres: await group('postgres', ['postgres']) }),
      file: { servers: [await start('file', `file:${freshDir(context.parent, 'send')}`)] },
      redis: await group('redis', ['redis']),
      'two on redis': await group('redis', ['redis A', 'redis B']),
      ...(SQL_STORES.length && { 'two on postgres': await group('postgres', ['postgres A', 'postgres B']) }),
    }
    const names = Object.keys(groups)
    const rounds = Object.fromEntries(names.map((name) => [name, []]))
    for (let round = 0; round < profile.rounds; round++) {
      for (const name of round % 2 ? [...names].reverse() : names) {
        const { servers: members, backend: shared } = groups[name]
        rounds[name].push(
          await sendLoad(members, {
            backend: shared,
            connections: profile.connections,
            durationSec: profile.durationSec,
            warmupSec: round === 0 ? profile.warmupSec : 0,
            maxRequests: profile.maxRequests,
            pinning: context.pinning,
          }),
        )
      }
      log(
        `send c=${profile.connections}, round ${round + 1}: ${names.map((name) => `${name} ${Math.round(rounds[name][round].rps)}`).join(', ')} /s`,
      )
    }
    const rows = {}
    for (const name of names) {
      const sorted = [...rounds[name]].sort((a, b) => a.rps - b.rps)
      const failed = rounds[name].find((r) => r.failed)?.failed
      rows[name] = {
        ...sorted[(sorted.length - 1) >> 1],
        rounds: rounds[name].map((r) => r.rps),
        ...(failed && { failed }),
      }
    }
    const ratios = Object.fromEntries(
      names.filter((n) => n !== 'memory').map((name) => [name, rows[name].rps / rows.memory.rps]),
    )
    const paired = Object.fromEntries(
      names
        .filter((n) => n !== 'memory')
        .map((name) => [name, rounds[name].map((r, i) => r.rps / rounds.memory[i].rps)]),
    )
    return {
      rows,
      ratios,
      paired,
      medianPaired: Object.fromEntries(Object.entries(paired).map(([name, values]) => [name, median(values)])),
    }
  } finally {
    for (const server of servers) await server.stop()
    for (const started of backends) await started.stop()
  }
}

/** Part 4, one shared store: a fresh pair of instances on a fresh server. */
async function followRun(store, context) {
  log(`follow (${store}): ${profile.followSamples} tasks run on A and followed on B`)
  const backend = await freshBackend(store, context)
  const pair = []
  try {
    pair.push(await agentOn(`${store} A`, { store: backend.url }, context))
    pair.push(await agentOn(`${store} B`, { store: backend.url }, context))
    const result = await followLatency(pair[0], pair[1], { samples: profile.followSamples })
    log(
      `follow (${store}): B − A p50 ${result.crossMinusLocal.p50.toFixed(2)} ms, emit → B p50 ${result.emitToB.p50.toFixed(2)} ms`,
    )
    return result
  } finally {
    for (const server of pair) await server.stop()
    await backend.stop()
  }
}

async function main() {
  const pinning = flags['no-pin'] ? { pinned: false, why: '--no-pin' } : pinningSupport()
  const parent = flags.dir ? resolve(flags.dir) : tmpdir()
  const machine = describeMachine(repoRoot)
  const runtimeLabel =
    flags.label ??
    (runtimeEntry
      ? 'a build given with --runtime'
      : `a2a-runtime ${machine.runtimeVersion}, this clone's build at ${machine.commit}${machine.runtimeDirty ? ' (runtime/ has uncommitted changes)' : ''}`)
  const meta = {
    ...machine,
    runtimeLabel,
    redisVersion: redisVersion(),
    postgresVersion: postgresVersion(),
    postgresMissing,
    fileSystem: fileSystemOf(parent),
    pinning: { pinned: pinning.pinned, why: pinning.why },
    quick: flags.quick,
    profile,
  }
  log(
    pinning.pinned
      ? 'pinning: agent servers on CPU 0; load, Redis, PostgreSQL and the bench on CPU 1'
      : `no pinning: ${pinning.why}`,
  )
  if (pinning.pinned) spawnSync(pinning.taskset, ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' })
  meta.backgroundBefore = await backgroundLoad()
  if (meta.backgroundBefore.busy > 0.1)
    log(
      `warning: the machine is already ${Math.round(meta.backgroundBefore.busy * 100)}% busy; the figures will be noisy`,
    )

  if (postgresMissing) log(`PostgreSQL skipped: ${postgresMissing}`)
  const results = { meta, list: {}, bytes: {}, throughput: {}, follow: {}, goals: [], problems: [] }
  const context = { pinning, parent }
  const foreign = watchForeignLoad()
  foreign.part('send')
  results.throughput = await throughputRun(context)
  foreign.part('bytes')
  results.bytes = await bytesRun(context)
  for (const store of ['redis', ...SQL_STORES]) {
    foreign.part(`follow ${store}`)
    results.follow[store] = await followRun(store, context)
  }
  for (const store of [...STORES.filter((name) => name !== 'postgres'), ...SQL_STORES]) {
    foreign.part(`list ${store}`)
    results.list[store] = await listRun(store, context)
  }
  meta.foreign = foreign.stop()

  for (const [name, row] of Object.entries(results.throughput.rows))
    if (row.failed) results.problems.push(`send ${name}: ${row.failed}`)
  for (const [store, follow] of Object.entries(results.follow))
    if (follow.counted === 0) results.problems.push(`${store}: no followed event was counted`)
  if (postgresMissing) results.problems.push(`PostgreSQL not measured: ${postgresMissing}`)
  results.goals = evaluateStoreGoals(results)
  for (const goal of results.goals) if (goal.met === undefined) results.problems.push(`no figure for: ${goal.goal}`)
  meta.backgroundAfter = await backgroundLoad()
  meta.elapsedSec = (performance.now() - began) / 1000

  const report = renderStoreReport(results)
  const outDir =
    flags.out ?? (flags.quick ? mkdtempSync(join(tmpdir(), 'a2a-stores-quick-')) : join(repoRoot, 'bench/results'))
  return publishReport(outDir, `${stamp(new Date())}-stores`, report, results)
}

await runAndExit(main, cleanup, log)
