// The stores report: the machine and settings, one table per measure, the goals judged from the
// numbers. Figures of a --quick run are printed the same way but mean nothing (tiny stores, one short round).
import { table } from './_report.mjs'

const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a')
const ms = (n) => (Number.isFinite(n) ? (n < 10 ? n.toFixed(2) : n.toFixed(1)) : 'n/a')
const mib = (n) => (Number.isFinite(n) ? `${(n / 1048576).toFixed(2)} MiB` : 'n/a')
const pct = (n) => (Number.isFinite(n) ? `${Math.round(n * 100)}%` : 'n/a')
const x = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : 'n/a')
const sec = (n) => (Number.isFinite(n) ? `${n.toFixed(1)} s` : 'n/a')

export const STORES = ['memory', 'file', 'redis', 'postgres']
const LIST_CALLS = { first: 'first page', filtered: 'status filter', next: 'second page (nextPageToken)' }
const REDIS_LIST_MS = 5
const REDIS_SCALE = 1.5
const BYTES_FACTOR = 4
const THROUGHPUT_GOALS = { file: 0.5, redis: 0.3, postgres: 0.3 }
const POSTGRES_LIST_MS = 5

/** Each goal of the issue: what it asks, the figure, and whether it is met (undefined: no figure). */
export function evaluateStoreGoals(results) {
  const goals = []
  const [small, large] = results.meta.profile.listSizes
  const redis = results.list.redis ?? {}
  const medians = Object.keys(LIST_CALLS).flatMap((call) => [
    redis[small]?.latency?.[call]?.p50,
    redis[large]?.latency?.[call]?.p50,
  ])
  const slowest = Math.max(...medians)
  goals.push({
    goal: `Redis ListTasks under ${REDIS_LIST_MS} ms (median of each call, at ${int(small)} and ${int(large)} tasks)`,
    value: `slowest median ${ms(slowest)} ms`,
    met: medians.every(Number.isFinite) ? slowest < REDIS_LIST_MS : undefined,
  })
  const growth = Object.keys(LIST_CALLS).map(
    (call) => redis[large]?.latency?.[call]?.p50 / redis[small]?.latency?.[call]?.p50,
  )
  const worst = Math.max(...growth)
  goals.push({
    goal: `Redis ListTasks about the same at ${int(large)} as at ${int(small)} tasks (each call's median within ${REDIS_SCALE}x)`,
    value: `largest ratio ${x(worst)}`,
    met: growth.every(Number.isFinite) ? worst <= REDIS_SCALE : undefined,
  })
  // Issue 38: PostgreSQL at the larger size, each call's median.
  const pg = results.list.postgres?.[large]?.latency ?? {}
  const pgMedians = Object.keys(LIST_CALLS).map((call) => pg[call]?.p50)
  const pgSlowest = Math.max(...pgMedians)
  goals.push({
    goal: `postgres: ListTasks at ${int(large)} tasks under ${POSTGRES_LIST_MS} ms (median of each call)`,
    value: `slowest median ${ms(pgSlowest)} ms`,
    met: pgMedians.every(Number.isFinite) ? pgSlowest < POSTGRES_LIST_MS : undefined,
  })
  for (const store of ['redis', 'file', 'postgres']) {
    const ratio = results.bytes[store]?.ratio
    goals.push({
      goal: `${store}: bytes written${store === 'postgres' ? ' (WAL)' : ''} for a 1 MiB message and its 1 MiB answer under ${BYTES_FACTOR}x their size`,
      value: x(ratio),
      met: Number.isFinite(ratio) ? ratio < BYTES_FACTOR : undefined,
    })
  }
  for (const [store, floor] of Object.entries(THROUGHPUT_GOALS)) {
    const ratio = results.throughput.ratios?.[store]
    const paired = results.throughput.medianPaired?.[store]
    goals.push({
      goal: `${store}: message/send c=16 at least ${floor}x the memory store's`,
      value: `${x(ratio)} (median paired ${x(paired)})`,
      met: Number.isFinite(ratio) ? ratio >= floor : undefined,
    })
  }
  return goals
}

// Past this much CPU taken by other processes over 5 s, a part's figures are marked as noisy.
const FOREIGN_NOISE_CORES = 0.2

function foreignLine(foreign) {
  if (!foreign?.supported) return 'not measured'
  const cores = (n) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a')
  const parts = Object.entries(foreign.parts)
    .map(
      ([name, f]) =>
        `${name} ${cores(f.meanCores)} (peak ${cores(f.peak5sCores)})${f.peak5sCores > FOREIGN_NOISE_CORES ? ' **noisy**' : ''}`,
    )
    .join('; ')
  return `CPU used by processes other than the bench's (kernel threads included, such as the file system's journal writing for a file store), in cores, mean and peak over 5 s: whole run ${cores(foreign.whole.meanCores)} (peak ${cores(foreign.whole.peak5sCores)}); ${parts}`
}

export function renderStoreReport(results) {
  const { meta } = results
  const { profile } = meta
  const out = []
  out.push(`# Store benchmark${meta.quick ? ' (--quick: figures are not meaningful)' : ''}`, '')
  out.push(
    table(
      ['', ''],
      [
        ['Date', meta.date],
        ['Machine', `${meta.cpuModel}, ${meta.cores} cores, ${meta.memoryGb} GB`],
        ['Node', meta.node],
        ['Runtime', meta.runtimeLabel],
        [
          'Redis',
          `redis-server ${meta.redisVersion}, a fresh one per measure, no persistence (\`--save ''\`, \`--appendonly no\`)${meta.pinning.pinned ? ', on CPU 1 (with the load generator): a deployment runs Redis apart from the agent' : ''}`,
        ],
        [
          'PostgreSQL',
          meta.postgresMissing
            ? `not measured: ${meta.postgresMissing}`
            : `PostgreSQL ${meta.postgresVersion} (Debian's), a fresh cluster per measure (initdb, 127.0.0.1), its folder beside the file stores', the defaults' durability: \`fsync\`, \`synchronous_commit\` and \`full_page_writes\` on (a commit waits for its WAL's fsync), 128 MB shared buffers, the store's defaults (a pool of 10, schema \`a2a\`)${meta.pinning.pinned ? ', every process of the cluster on CPU 1 (with the load generator)' : ''}`,
        ],
        ['File store', `a fresh directory per measure on ${meta.fileSystem}`],
        [
          'Pinning',
          meta.pinning.pinned
            ? 'taskset: agent servers on CPU 0; load generator, redis-server, PostgreSQL and the bench on CPU 1; the processes that fill a file, Redis or PostgreSQL store before a measure on either'
            : `none (${meta.pinning.why})`,
        ],
        [
          'Background',
          `CPU ${pct(meta.backgroundBefore?.busy)} busy before the run, ${pct(meta.backgroundAfter?.busy)} after (1 s of /proc/stat each; load average ${meta.backgroundBefore?.loadavg?.toFixed(2)} → ${meta.backgroundAfter?.loadavg?.toFixed(2)})${meta.backgroundBefore?.busy > 0.1 || meta.backgroundAfter?.busy > 0.1 ? ' — **the machine was not idle: figures are noisy**' : ''}`,
        ],
        ['Other work during the run', foreignLine(meta.foreign)],
        ['Bench time', `${Math.round(meta.elapsedSec)} s`],
      ],
    ),
  )

  out.push('', '## 1. ListTasks latency', '')
  out.push(
    `A2A v1.0 \`ListTasks\` (\`pageSize: 50\`), one call at a time on one kept-alive connection from CPU 1: ${profile.listWarmup} calls of each kind not counted, then ${profile.listCalls} of each, the kinds interleaved; every page checked (size, order, totalSize, the filter, the second page after the first). ` +
      "The stores were filled by `SendMessage` requests (A2A v1.0, 64 at a time) answered by the agent's own request handler in-process (`app.fetch`: the whole path of a request but the socket), one in ten asking the agent to fail (so the status filter, `TASK_STATE_FAILED`, matches a tenth). " +
      `Memory: the server fills its own store before it listens (a fresh process per size). File, Redis and PostgreSQL: a fill process writes the tasks and exits, then a fresh server opens the store (the file store reads every task back at start; PostgreSQL is vacuumed and analysed first, \`VACUUM (ANALYZE)\`, as after any bulk load); the ${int(profile.listSizes[1])}-task store is the ${int(profile.listSizes[0])}-task one with the rest added. ` +
      "The task cap is raised above the fill (and the memory and file stores' byte budget with it, to 4 GiB) so nothing is evicted.",
    '',
  )
  const listRows = []
  for (const store of STORES) {
    for (const size of profile.listSizes) {
      const row = results.list[store]?.[size]
      for (const [call, label] of Object.entries(LIST_CALLS)) {
        const latency = row?.latency?.[call]
        listRows.push([
          store,
          int(size),
          label,
          ms(latency?.p50),
          ms(latency?.p99),
          ms(latency?.max),
          call === 'first' ? `${sec(row?.fillSec)} (${int(row?.fillRate)}/s)` : '',
          call === 'first' ? sec(row?.readySec) : '',
        ])
      }
    }
  }
  out.push(
    table(['store', 'tasks', 'call', 'p50 ms', 'p99 ms', 'max ms', 'fill (this step)', 'server start'], listRows),
  )
  out.push(
    '',
    '"server start": from spawn to the first answer of the card (a memory server fills its store in it; a file store reads every task back).',
  )

  out.push('', '## 2. Bytes written for a 1 MiB message answered in 1,000 chunks', '')
  out.push(
    `One \`SendStreamingMessage\` of ${int(profile.bytesText)} ASCII characters; the agent echoes them back as one artifact in ${int(profile.bytesChunks)} \`task.artifact(chunk, { artifactId, append: i > 0, lastChunk })\` calls, then completes. ` +
      "Measured across the send, until the writes stop (300 ms without change), after a smaller warm-up send. Redis: `total_net_input_bytes` of the store's redis-server (every command the agent server sent it). " +
      "PostgreSQL: the WAL written across the send (`pg_wal_lsn_diff` of `pg_current_wal_insert_lsn()` before and after; with fsync on, every commit waits for its WAL on the disk; the tables' pages reach their files later, at checkpoints and by the background writer, and are not counted in it). " +
      "File: the server's `wchar` in `/proc/<pid>/io` (bytes passed to write calls) less the bytes of the answer on its socket; and the task's records in the log afterwards. " +
      'The base is the message plus the answer: 2 MiB of text.',
    '',
  )
  const byteRows = []
  for (const store of ['redis', 'postgres', 'file']) {
    const b = results.bytes[store]
    const files = b?.records ? `${b.records.join(', ')}: ${mib(b.recordsBytes)}` : ''
    byteRows.push([store, mib(b?.written), x(b?.ratio), mib(b?.answerBytes), files])
  }
  out.push(
    table(
      ['store', 'written', 'vs message + answer', 'answer on the socket', 'the task in the log afterwards'],
      byteRows,
    ),
  )
  const pgBytes = results.bytes.postgres
  if (pgBytes) {
    const wal = pgBytes.wal ?? {}
    const managers = Object.entries(wal.byManager ?? {})
      .sort(([, a], [, b]) => b.recordBytes + b.fpiBytes - (a.recordBytes + a.fpiBytes))
      .map(([name, m]) => `${name} ${int(m.records)} records, ${mib(m.recordBytes + m.fpiBytes)}`)
    out.push(
      '',
      'PostgreSQL, besides the WAL:',
      '',
      table(
        ['', ''],
        [
          [
            'the WAL by kind (`pg_waldump --stats`)',
            wal.error ? `not read: ${wal.error}` : `${int(wal.records)} records: ${managers.join('; ')}`,
          ],
          ['of it, full-page images', wal.error ? 'n/a' : mib(wal.fpiBytes)],
          [
            "bytes the agent sent PostgreSQL (its `wchar` less the answer on its socket: the statements' text and values)",
            mib(pgBytes.sentToPostgres),
          ],
          [
            "the schema's tables, TOAST and indexes grew by (`pg_total_relation_size`: written to their files later)",
            mib(pgBytes.tablesGrew),
          ],
        ],
      ),
    )
  }

  out.push('', '## 3. message/send c=16 throughput by store', '')
  const t = results.throughput
  out.push(
    `The echo agent (\`servers/store-agent.mjs\`, one artifact) on each store with its defaults, side by side on CPU 0, autocannon (\`load.mjs\`) on CPU 1; platform \`message/send\` of "hi", every answer checked. ${profile.rounds} round(s) of ${profile.durationSec} s per server, the servers taking turns in an order that alternates, ${profile.warmupSec} s of warm-up in the first; each server's median round. ` +
      'The ratio is of the medians; the paired ratios are each round\'s (PostgreSQL runs right after memory, or right before it in the reversed rounds). "two on redis", "two on postgres": two agent processes on one Redis or one PostgreSQL database, both on CPU 0, the 16 connections spread over both. "store CPU": the redis-server, or every process of the PostgreSQL cluster (its backends, WAL writer, checkpointer), in cores.',
    '',
  )
  const throughputRows = Object.entries(t.rows ?? {}).map(([name, r]) => [
    name,
    int(r?.rps),
    ms(r?.p50),
    ms(r?.p99),
    r?.serverCpu?.map(pct).join(' + ') ?? 'n/a',
    r?.backendCpu === undefined ? '' : pct(r.backendCpu),
    pct(r?.clientCpu),
    name === 'memory' ? '' : x(t.ratios?.[name]),
    name === 'memory' ? '' : (t.paired?.[name] ?? []).map((v) => v.toFixed(2)).join(' '),
    (r?.rounds ?? []).map((v) => int(v)).join(' / ') + (r?.failed ? ` **FAILED: ${r.failed}**` : ''),
  ])
  out.push(
    table(
      [
        'store',
        'req/s',
        'p50 ms',
        'p99 ms',
        'server CPU',
        'store CPU',
        'load CPU',
        'vs memory',
        'paired',
        'rounds req/s',
      ],
      throughputRows,
    ),
  )

  out.push('', '## 4. Two instances on one store: an event followed on the other instance', '')
  const follows = results.follow ?? {}
  const anyFollow = Object.values(follows)[0]
  out.push(
    `Two agent processes (A and B) on one fresh Redis, then on one fresh PostgreSQL cluster, both on CPU 0. Per task (${int(profile.followSamples)} counted, one at a time, after 3 not counted): \`SendStreamingMessage\` on A; as soon as A's stream names the task, \`SubscribeToTask\` on B (its first event, the Task, confirms the subscription); ${anyFollow?.delayMs ?? '?'} ms after the task started, the agent (on A) emits one artifact carrying the time it emitted it. ` +
      "A hands the event to its own stream as it is emitted (it does not wait for the store); B gets it from the store (Redis: A's write and publish, B's subscription; PostgreSQL: A's insert and NOTIFY in its transaction, B's LISTEN connection; then B's stream). " +
      '"B − A" is the arrival on B\'s stream minus the arrival on A\'s, on the bench\'s clock: what following on another instance adds. "emit → B" and "emit → A" run from the agent\'s clock to the bench\'s (both the system clock).',
    '',
  )
  const followRows = []
  for (const [store, f] of Object.entries(follows)) {
    const row = (label, figure) => [store, label, ms(figure?.p50), ms(figure?.p99), ms(figure?.max)]
    followRows.push(
      row('B − A (cross-instance, added)', f.crossMinusLocal),
      row('emit → B (followed through the store)', f.emitToB),
      row('emit → A (the instance that runs it)', f.emitToA),
    )
  }
  out.push(table(['store', '', 'p50 ms', 'p99 ms', 'max ms'], followRows))
  for (const [store, f] of Object.entries(follows))
    if (f.late)
      out.push('', `${store}: ${f.late} sample(s) not counted: B's subscription was confirmed after the emission.`)
  for (const store of ['redis', 'postgres']) {
    const pair = t.rows?.[`two on ${store}`]
    const single = t.rows?.[store]
    if (pair && single)
      out.push(
        '',
        `Sends spread over two instances on ${store}: ${int(pair.rps)} req/s against ${int(single.rps)} on one instance (${x(pair.rps / single.rps)}; both instances share CPU 0, so this is the cost of two processes on one core, not the gain of a second machine).`,
      )
  }

  out.push('', '## Goals', '')
  out.push(
    table(
      ['goal', 'figure', 'met'],
      results.goals.map((g) => [g.goal, g.value, g.met === undefined ? 'no figure' : g.met ? 'yes' : '**no**']),
    ),
  )
  if (results.problems.length) out.push('', '## Problems', '', ...results.problems.map((p) => `- ${p}`))
  out.push('')
  return out.join('\n')
}
