// The Markdown report: the machine and settings, one table per workload (each server's figures, and for ours
// the ratio to the SDK and to the ceiling), ours over each A2A v1.0 binding beside JSON-RPC, the runtime rows (each
// runtime's agent beside its ceiling), the issue's targets computed from the numbers, and the list of figures that
// are missing (which makes the run fail).

const SERVERS = ['ours', 'sdk', 'ceiling']
const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'NaN')
const ms = (n) => (Number.isFinite(n) ? (n < 10 ? n.toFixed(2) : n.toFixed(1)) : 'NaN')
const mb = (n) => (Number.isFinite(n) ? (n / 1048576).toFixed(1) : 'NaN')
const pct = (n) => (Number.isFinite(n) ? `${Math.round(n * 100)}%` : 'n/a')
const x = (n) => (Number.isFinite(n) ? `${n < 10 ? n.toFixed(2) : n.toFixed(1)}x` : 'n/a')

function ratios(rows, key) {
  const ours = rows.ours?.[key]
  return `${x(ours / rows.sdk?.[key])} SDK · ${x(ours / rows.ceiling?.[key])} ceiling`
}

/** A Markdown table. */
export function table(head, rows) {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n')
}

const failedCell = (row) => (row?.failed ? ` **FAILED: ${row.failed}**` : '')

export function renderReport(results) {
  const { meta } = results
  const out = []
  out.push(`# A2A server benchmark${meta.smoke ? ' (smoke: figures are not meaningful)' : ''}`)
  out.push('')
  out.push(
    table(
      ['', ''],
      [
        ['Date', meta.date],
        ['Machine', `${meta.cpuModel}, ${meta.cores} cores, ${meta.memoryGb} GB`],
        ['Node', meta.node],
        [
          'Pinning',
          meta.pinning.pinned
            ? 'taskset: servers on CPU 0, load generators (and the bench) on CPU 1'
            : `none (${meta.pinning.why})`,
        ],
        [
          'Runtime',
          `a2a-runtime ${meta.runtimeVersion} at ${meta.commit}${meta.runtimeDirty ? ' (runtime/ has uncommitted changes)' : ''}; project ${meta.projectReused ? 'reused' : 'generated'} (echo template, streaming on)`,
        ],
        ['SDK', `@a2a-js/sdk ${meta.sdkVersion}, express ${meta.expressVersion}, autocannon ${meta.autocannonVersion}`],
        [
          'Durations',
          `each load row: ${meta.profile.rounds} round(s) of ${meta.profile.durationSec} s per server, the servers taking turns (order alternating), the median round reported; ${meta.profile.warmupSec} s warm-up in the first round; memory: ${int(meta.profile.memoryTasks)} tasks at c=${meta.profile.memoryConcurrency} within ${meta.profile.memoryBudgetSec} s; startup: ${meta.profile.startupRuns} round(s) after one uncounted start of each, the order alternating`,
        ],
        [
          'Wire',
          'ours and ceiling: platform dialect (`message/send`, `message/stream`); SDK: A2A v1.0 (`SendMessage`, `SendStreamingMessage`, header `A2A-Version: 1.0`), its native JSON-RPC path. Same message ("hi", one messageId for all requests), every response body checked',
        ],
        [
          'Background',
          `CPU ${pct(meta.backgroundBefore?.busy)} busy before the run, ${pct(meta.backgroundAfter?.busy)} after (1 s of /proc/stat each; load average ${meta.backgroundBefore?.loadavg?.toFixed(2)} → ${meta.backgroundAfter?.loadavg?.toFixed(2)})${meta.backgroundBefore?.busy > 0.1 || meta.backgroundAfter?.busy > 0.1 ? ' — **the machine was not idle: figures are noisy**' : ''}`,
        ],
        ['Bench time', `${Math.round(meta.elapsedSec)} s`],
      ],
    ),
  )

  out.push(
    '',
    '"server CPU" is the server process\'s CPU time over the row (its core\'s kernel network work not included); "load CPU" the load generator\'s. A load CPU near 100% means the row measured the client, not the server.',
  )
  out.push('', '## message/send', '')
  out.push('Blocking send of one message; the answer is the completed task with the echoed artifact.', '')
  const sendRows = []
  for (const c of meta.profile.sendConcurrency) {
    const rows = results.send[c] ?? {}
    for (const name of SERVERS) {
      const r = rows[name]
      sendRows.push([
        c,
        name,
        int(r?.rps),
        ms(r?.p50),
        ms(r?.p99),
        int(r?.requests),
        pct(r?.serverCpu),
        pct(r?.clientCpu),
        (name === 'ours' ? ratios(rows, 'rps') : '') + failedCell(r),
      ])
    }
  }
  out.push(
    table(['c', 'server', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'server CPU', 'load CPU', 'ours vs'], sendRows),
  )

  out.push('', `## message/stream (c=${meta.profile.streamConcurrency})`, '')
  out.push('First event: until the first complete SSE event has arrived; stream: until the response has ended.', '')
  out.push(
    table(
      [
        'server',
        'streams/s',
        'first event p50 ms',
        'first event p99 ms',
        'stream p50 ms',
        'stream p99 ms',
        'events/stream',
        'streams',
        'server CPU',
        'load CPU',
        'ours vs',
      ],
      SERVERS.map((name) => {
        const r = results.stream[name]
        return [
          name,
          int(r?.streamsPerSec),
          ms(r?.firstEventP50),
          ms(r?.firstEventP99),
          ms(r?.totalP50),
          ms(r?.totalP99),
          r ? String(r.eventsPerStream) : 'NaN',
          int(r?.streams),
          pct(r?.serverCpu),
          pct(r?.clientCpu),
          (name === 'ours' ? ratios(results.stream, 'streamsPerSec') : '') + failedCell(r),
        ]
      }),
    ),
  )

  out.push('', `## Agent card GET (c=${meta.profile.cardConcurrency})`, '')
  out.push(
    table(
      ['server', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'server CPU', 'load CPU', 'ours vs'],
      SERVERS.map((name) => {
        const r = results.card[name]
        return [
          name,
          int(r?.rps),
          ms(r?.p50),
          ms(r?.p99),
          int(r?.requests),
          pct(r?.serverCpu),
          pct(r?.clientCpu),
          (name === 'ours' ? ratios(results.card, 'rps') : '') + failedCell(r),
        ]
      }),
    ),
  )

  const checkpoint = results.memory.ours?.checkpoint?.tasks ?? meta.profile.memoryCheckpoint
  out.push('', '## Memory', '')
  out.push(
    `A fresh server, \`--expose-gc\`, two \`gc()\` before each reading. Bytes per task = heap growth / the tasks the server still holds ` +
      `(ours keeps at most ${int(meta.oursMaxTasks)} settled tasks; the SDK keeps every task; the ceiling keeps none, so its figure is per request). ` +
      `"Per extra task" is the heap growth after the first ${int(checkpoint)} tasks divided by the tasks sent after them: about 0 once a store stops growing.`,
    '',
  )
  out.push(
    table(
      [
        'server',
        'messages sent',
        'tasks held',
        'heap at rest MB',
        `heap after ~${int(checkpoint)} MB`,
        'heap after all MB',
        'RSS at rest MB',
        'RSS after MB',
        'bytes per task',
        'divided by',
        'per extra task B',
      ],
      SERVERS.map((name) => {
        const r = results.memory[name]
        return [
          name,
          int(r?.sent) + (r?.timeBounded ? ' (time-bounded)' : ''),
          int(r?.held),
          mb(r?.baseline?.heapUsed),
          mb(r?.checkpoint?.heapUsed),
          mb(r?.after?.heapUsed),
          mb(r?.baseline?.rss),
          mb(r?.after?.rss),
          int(r?.bytesPerTask),
          r?.divisor ? `${int(r.divisor.count)} ${r.divisor.what}` : 'n/a',
          int(r?.bytesPerExtraTask),
        ]
      }),
    ),
  )

  const om = results.memory.ours
  const sm = results.memory.sdk
  if (om) {
    out.push(
      '',
      `After retention, ours holds ${int(om.held)} tasks of the ${int(om.sent)} it was sent, in ${mb(om.after?.heapUsed)} MB of heap (${mb(om.after?.rss)} MB RSS); ` +
        `past the first ${int(om.checkpoint?.tasks)} tasks its heap grew ${int(om.bytesPerExtraTask)} B per further task` +
        (sm
          ? `, the SDK's ${int(sm.bytesPerExtraTask)} B (it holds all ${int(sm.held)}, ${mb(sm.after?.heapUsed)} MB of heap).`
          : '.'),
    )
  }

  out.push('', '## Startup', '')
  out.push(
    'From spawn until the card answers 200 (polled every 5 ms), the servers taken in rounds, the order alternating (_startup.mjs); CPU: what the process had used by then. ours: `a2a start` in the generated project (what `npm start` runs, without npm), TypeScript loaded through jiti (its transpile cache warm: the project has been started before).',
    '',
  )
  out.push(
    table(
      ['server', 'median ms', 'p90 ms', 'min ms', 'max ms', 'CPU ms', 'runs', 'ours vs'],
      SERVERS.map((name) => {
        const r = results.startup[name]
        const { ours, sdk, ceiling } = results.startup
        return [
          name,
          ms(r?.median),
          ms(r?.p90),
          ms(r?.min),
          ms(r?.max),
          ms(r?.cpuMedian),
          String(r?.runs?.length ?? 0),
          name === 'ours'
            ? `${x(ours?.median / sdk?.median)} SDK's time · ${x(ours?.median / ceiling?.median)} ceiling's`
            : '',
        ]
      }),
    ),
  )
  out.push('', ...startupRuntimesSection(results))

  out.push('', ...bindingsSection(results))
  out.push('', ...runtimesSection(results))
  out.push('', ...adaptersSection(results))

  out.push('', `## Targets${meta.smoke ? ` (smoke: c=${meta.profile.targetConcurrency}, indicative only)` : ''}`, '')
  out.push(
    table(
      ['target', 'measured', 'met'],
      results.targets.map((t) => [t.name, t.measured, t.met ? 'yes' : '**no**']),
    ),
  )

  if (results.problems.length) out.push('', '## Problems', '', ...results.problems.map((p) => `- ${p}`))
  return `${out.join('\n')}\n`
}

const BINDINGS = [
  ['jsonrpc', 'JSON-RPC'],
  ['rest', 'HTTP+JSON'],
  ['grpc', 'gRPC'],
]
// The issue's goal for each binding's throughput (issue 35): within 10% of JSON-RPC's.
const BINDING_GOAL = 0.9
// A load generator this busy was the limit of its row.
const LOAD_BOUND = 0.9

/**
 * The start-up of `a2a start` on each Node, of serveAgent on each runtime, of the h3 + srvx floor on each Node, and of
 * bare node:http (_startup.mjs).
 */
function startupRuntimesSection(results) {
  const rows = results.startupRuntimes ?? {}
  const yardstick = rows['bare node:http']?.median
  return [
    '### Start-up per runtime',
    '',
    "`a2a start` of the generated project on each Node (V8's compile cache kept from Node 22.1 on), the echo agent served by `serveAgent` in a script (`servers/echo-runtime.mjs`) on each runtime, the floor of the runtime's HTTP layer on each Node (an h3 app served by srvx answering a card, with none of the runtime: `servers/h3-floor.mjs`), and bare node:http, taken in the same rounds. Workers are not measured: `wrangler dev` bundles the Worker and starts workerd, seconds that say nothing of a deployed Worker's start.",
    '',
    table(
      ['server', 'median ms', 'p90 ms', 'min ms', 'CPU ms', 'runs', 'vs bare node:http'],
      Object.entries(rows).map(([name, r]) => [
        name,
        ms(r.median),
        ms(r.p90),
        ms(r.min),
        ms(r.cpuMedian),
        String(r.runs.length),
        x(r.median / yardstick),
      ]),
    ),
  ]
}

/** Ours over each A2A v1.0 binding, each beside JSON-RPC's figure of the same row (_bindings.mjs). */
function bindingsSection(results) {
  const { profile } = results.meta
  const { send = {}, stream = {} } = results.bindings ?? {}
  const vsJsonRpc = (rows, name, key) => (name === 'jsonrpc' ? '' : x(rows[name]?.[key] / rows.jsonrpc?.[key]))
  const cpuPerCall = (r) => (Number.isFinite(r?.serverCpuPerCallUs) ? r.serverCpuPerCallUs.toFixed(1) : 'n/a')
  const clientBound = BINDINGS.flatMap(([name, label]) =>
    [
      ['SendMessage', send[name]],
      ['SendStreamingMessage', stream[name]],
    ]
      .filter(([, r]) => r?.clientCpu >= LOAD_BOUND)
      .map(([row, r]) => `${label} ${row} (load CPU ${pct(r.clientCpu)})`),
  )
  return [
    '## Bindings (ours, A2A v1.0)',
    '',
    'One `a2a start` of the generated project with gRPC on (`A2A_GRPC_PORT`, the gRPC packages installed in the project), answering the same message over each binding: JSON-RPC (`SendMessage` / `SendStreamingMessage` on `POST /`, `A2A-Version: 1.0`), HTTP+JSON (`POST /message:send` / `POST /message:stream`) and gRPC (`lf.a2a.v1.A2AService`, unary and server stream). HTTP loads as above (autocannon, `stream-load.mjs`); gRPC\'s is `grpc-load.mjs`: @grpc/grpc-js with the runtime\'s own descriptors, the calls spread over 4 channels, the encoded request reused, every answer decoded and checked. Rounds take the bindings in turn, the order alternating; the median round. "vs JSON-RPC" is the throughput ratio (the goal: within 10%, ≥ 0.90x); "server CPU µs" the server\'s CPU time over the row per good answer, warm-up included, and its ratio to JSON-RPC\'s.',
    '',
    `### SendMessage (c=${profile.targetConcurrency})`,
    '',
    table(
      [
        'binding',
        'req/s',
        'p50 ms',
        'p99 ms',
        'requests',
        'server CPU',
        'server CPU µs/req',
        'load CPU',
        'vs JSON-RPC',
        'CPU/req vs JSON-RPC',
      ],
      BINDINGS.map(([name, label]) => {
        const r = send[name]
        return [
          label,
          int(r?.rps),
          ms(r?.p50),
          ms(r?.p99),
          int(r?.requests),
          pct(r?.serverCpu),
          cpuPerCall(r),
          pct(r?.clientCpu),
          vsJsonRpc(send, name, 'rps') + failedCell(r),
          vsJsonRpc(send, name, 'serverCpuPerCallUs'),
        ]
      }),
    ),
    '',
    `### SendStreamingMessage (c=${profile.streamConcurrency})`,
    '',
    table(
      [
        'binding',
        'streams/s',
        'first event p50 ms',
        'first event p99 ms',
        'stream p50 ms',
        'stream p99 ms',
        'events/stream',
        'streams',
        'server CPU',
        'server CPU µs/stream',
        'load CPU',
        'vs JSON-RPC',
        'CPU/stream vs JSON-RPC',
      ],
      BINDINGS.map(([name, label]) => {
        const r = stream[name]
        return [
          label,
          int(r?.streamsPerSec),
          ms(r?.firstEventP50),
          ms(r?.firstEventP99),
          ms(r?.totalP50),
          ms(r?.totalP99),
          r ? String(r.eventsPerStream) : 'NaN',
          int(r?.streams),
          pct(r?.serverCpu),
          cpuPerCall(r),
          pct(r?.clientCpu),
          vsJsonRpc(stream, name, 'streamsPerSec') + failedCell(r),
          vsJsonRpc(stream, name, 'serverCpuPerCallUs'),
        ]
      }),
    ),
    '',
    `Rounds (req/s, streams/s): ${BINDINGS.map(([name, label]) => `${label} ${roundsOf(send[name])} and ${roundsOf(stream[name])}`).join('; ')}.`,
    '',
    clientBound.length
      ? `**Bounded by the load generator** (its core ≥ ${pct(LOAD_BOUND)} busy): ${clientBound.join(', ')}. There the rate says what the client could send, and the server's CPU per request (the warm-up's included) is the fairer comparison.`
      : `No row was bounded by the load generator (its core < ${pct(LOAD_BOUND)} busy in each).`,
  ]
}

const roundsOf = (row) => (row?.rounds ?? []).map(int).join(' / ')

/** Each runtime's agent beside the raw ceiling on the same runtime (_runtimes.mjs). */
function runtimesSection(results) {
  const { profile } = results.meta
  const c = profile.runtimeConcurrency
  const rows = Object.entries(results.runtimes ?? {}).map(([name, r]) => {
    const { send, stream } = r
    const loadCpu = Math.max(
      ...[send.agent, send.ceiling, stream.agent, stream.ceiling].map((row) => row.clientCpu ?? NaN),
    )
    const failed = [send.agent, send.ceiling, stream.agent, stream.ceiling].map(failedCell).join('')
    return [
      `${name} (${r.version})${failed}`,
      int(send.agent.rps),
      int(send.ceiling.rps),
      x(send.agent.rps / send.ceiling.rps),
      int(stream.agent.streamsPerSec),
      int(stream.ceiling.streamsPerSec),
      x(stream.agent.streamsPerSec / stream.ceiling.streamsPerSec),
      String(stream.agent.eventsPerStream),
      pct(loadCpu),
    ]
  })
  return [
    `## Runtimes (message/send and message/stream, c=${c})`,
    '',
    "The same echo agent (`servers/echo-runtime.mjs`: `serveAgent`, which serves through node:http on Node and through Bun.serve / Deno.serve natively on Bun and Deno; on workerd `servers/worker-agent.mjs`: `agentWorker`, every request through the agent's Durable Object, its tasks in the object's storage) beside a raw ceiling on the same runtime answering the same bytes (node:http `servers/ceiling.mjs`; a fetch handler on Bun.serve / Deno.serve `servers/ceiling-fetch.mjs`; a Worker's own fetch handler `servers/worker-ceiling.mjs`). Each pair alone on the server core, its rounds alternating the order, the median round; every response checked. workerd runs under `wrangler dev`, behind its local proxy (a Durable Object of wrangler's in a second workerd process, which fetches every request from the Worker; it and wrangler's Node process share the server core): these are figures of workerd behind wrangler's dev proxy, not of Cloudflare's edge. \"load CPU\" is the load generator's highest share over the four measures: near 100% it measured the client.",
    '',
    table(
      [
        'runtime',
        'send req/s agent',
        'send req/s ceiling',
        'send agent/ceiling',
        'streams/s agent',
        'streams/s ceiling',
        'stream agent/ceiling',
        'events/stream',
        'load CPU',
      ],
      rows,
    ),
  ]
}

/** Each framework adapter against a hand-written execute streaming the same chunks (_adapters.mjs). */
function adaptersSection(results) {
  const rows = Object.entries(results.adapters ?? {}).map(([name, r]) => [
    name,
    String(r.chunksPerStream),
    ms(r.handWrittenUsPerChunk),
    ms(r.adaptedUsPerChunk),
    x(r.ratio),
    `${x(r.interval?.[0])}–${x(r.interval?.[1])}`,
    String(r.rounds?.length ?? 0),
  ])
  return [
    '## Framework adapters (CPU per streamed chunk)',
    '',
    "Each adapter (`a2a-runtime/ai-sdk`, `/mastra`, `/langgraph`) beside a hand-written `execute` that reads the same framework agent's stream and writes the same chunks itself, both on a mock model that answers at once (`_mock-models.mjs`), in one process on the server core, message/stream served in-process and read to its end, in interleaved rounds. The CPU of each round over its chunks; the ratio is the geometric mean of the paired rounds, with its 95% interval. The difference is the adapter's own work (its event mapping, the conversation it reads from the store); the framework's is in both.",
    '',
    table(
      [
        'framework',
        'chunks/stream',
        'hand-written µs/chunk',
        'adapter µs/chunk',
        'adapter/hand-written',
        '95% interval',
        'rounds',
      ],
      rows,
    ),
  ]
}

/** The issue's targets, from the numbers. */
export function evaluateTargets(results) {
  const c = results.meta.profile.targetConcurrency
  const send = results.send[c] ?? {}
  const stream = results.stream
  const card = results.card
  const t = []
  const add = (name, value, measured, met) =>
    t.push({ name, value, measured, met: Boolean(met) && Number.isFinite(value) })
  const sendVsSdk = send.ours?.rps / send.sdk?.rps
  add(`message/send c=${c} ≥ 5x SDK req/s`, sendVsSdk, x(sendVsSdk), sendVsSdk >= 5)
  const sendVsCeiling = send.ours?.rps / send.ceiling?.rps
  add(`message/send c=${c} ≥ 0.6x ceiling req/s`, sendVsCeiling, x(sendVsCeiling), sendVsCeiling >= 0.6)
  const p99 = send.ours?.p99 / send.sdk?.p99
  add(
    `message/send c=${c} p99 ≤ 1/3 of SDK's`,
    p99,
    `${ms(send.ours?.p99)} ms vs ${ms(send.sdk?.p99)} ms (${x(p99)})`,
    p99 <= 1 / 3,
  )
  const streamVsSdk = stream.ours?.streamsPerSec / stream.sdk?.streamsPerSec
  const sameEvents = stream.ours?.eventsPerStream === stream.sdk?.eventsPerStream
  add(
    `message/stream c=${results.meta.profile.streamConcurrency} ≥ 2x SDK streams/s, same events per stream`,
    streamVsSdk,
    `${x(streamVsSdk)}, events ${stream.ours?.eventsPerStream} vs ${stream.sdk?.eventsPerStream}`,
    streamVsSdk >= 2 && sameEvents,
  )
  const cardVsSdk = card.ours?.rps / card.sdk?.rps
  add('card GET ≥ 5x SDK req/s', cardVsSdk, x(cardVsSdk), cardVsSdk >= 5)
  const perTask = results.memory.ours?.bytesPerTask
  add('≤ 1.5 KB heap per retained task', perTask, `${int(perTask)} B`, perTask <= 1536)
  const ready = results.startup.ours?.median
  add('`a2a start` ready ≤ 300 ms (median)', ready, `${ms(ready)} ms`, ready <= 300)
  const readyVsCeiling = ready / results.startup.ceiling?.median
  // The floor under it on the bench's Node (its row comes first): no server on h3 and srvx starts faster.
  const floor = Object.entries(results.startupRuntimes ?? {}).find(([name]) => name.startsWith('h3 + srvx floor'))?.[1]
  const floorVsBare = floor?.median / results.startupRuntimes?.['bare node:http']?.median
  const floorSaid = Number.isFinite(floorVsBare) ? `; the h3 + srvx floor on this Node: ${x(floorVsBare)}` : ''
  add(
    '`a2a start` ready ≤ 1.5x bare node:http (median)',
    readyVsCeiling,
    `${ms(ready)} vs ${ms(results.startup.ceiling?.median)} ms (${x(readyVsCeiling)})${floorSaid}`,
    readyVsCeiling <= 1.5,
  )
  for (const [row, rows, rate, c] of [
    ['SendMessage', results.bindings?.send, 'rps', results.meta.profile.targetConcurrency],
    ['SendStreamingMessage', results.bindings?.stream, 'streamsPerSec', results.meta.profile.streamConcurrency],
  ]) {
    for (const [name, label] of BINDINGS.slice(1)) {
      const ratio = rows?.[name]?.[rate] / rows?.jsonrpc?.[rate]
      add(
        `${label} ${row} c=${c} within 10% of JSON-RPC's throughput`,
        ratio,
        `${int(rows?.[name]?.[rate])} vs ${int(rows?.jsonrpc?.[rate])} /s (${x(ratio)})`,
        ratio >= BINDING_GOAL,
      )
    }
  }
  for (const [name, r] of Object.entries(results.adapters ?? {})) {
    add(
      `${name} adapter < 10% CPU per streamed chunk over a hand-written execute`,
      r.ratio,
      `${x(r.ratio)} (${x(r.interval?.[0])}–${x(r.interval?.[1])})`,
      r.ratio < 1.1,
    )
  }
  return t
}

/** Every figure the report needs, as [path, value]; NaN or missing ones are problems. */
export function missingFigures(results) {
  const missing = []
  const need = (path, value) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) missing.push(`${path} is ${value}`)
  }
  for (const c of results.meta.profile.sendConcurrency) {
    for (const name of SERVERS)
      for (const key of ['rps', 'p50', 'p99', 'requests'])
        need(`send c=${c} ${name}.${key}`, results.send[c]?.[name]?.[key])
  }
  for (const name of SERVERS) {
    for (const key of ['streamsPerSec', 'firstEventP50', 'firstEventP99', 'totalP50', 'totalP99', 'eventsPerStream'])
      need(`stream ${name}.${key}`, results.stream[name]?.[key])
    for (const key of ['rps', 'p50', 'p99']) need(`card ${name}.${key}`, results.card[name]?.[key])
    const m = results.memory[name]
    need(`memory ${name}.baseline.heapUsed`, m?.baseline?.heapUsed)
    need(`memory ${name}.after.heapUsed`, m?.after?.heapUsed)
    need(`memory ${name}.after.rss`, m?.after?.rss)
    need(`memory ${name}.bytesPerTask`, m?.bytesPerTask)
    need(`memory ${name}.bytesPerExtraTask`, m?.bytesPerExtraTask)
    need(`startup ${name}.median`, results.startup[name]?.median)
  }
  for (const [name, r] of Object.entries(results.startupRuntimes ?? {})) need(`startup ${name}.median`, r.median)
  if (Object.keys(results.startupRuntimes ?? {}).length === 0) missing.push('startup per runtime: no row')
  for (const [name] of BINDINGS) {
    for (const key of ['rps', 'p50', 'p99', 'requests'])
      need(`bindings send ${name}.${key}`, results.bindings?.send?.[name]?.[key])
    for (const key of ['streamsPerSec', 'firstEventP50', 'firstEventP99', 'totalP50', 'totalP99', 'eventsPerStream'])
      need(`bindings stream ${name}.${key}`, results.bindings?.stream?.[name]?.[key])
  }
  for (const name of ['ai-sdk', 'mastra', 'langgraph']) {
    for (const key of ['handWrittenUsPerChunk', 'adaptedUsPerChunk', 'ratio'])
      need(`adapters ${name}.${key}`, results.adapters?.[name]?.[key])
  }
  for (const name of results.meta.runtimes ?? []) {
    for (const server of ['agent', 'ceiling']) {
      const r = results.runtimes?.[name]
      for (const key of ['rps', 'p50', 'p99', 'requests'])
        need(`runtimes ${name} send ${server}.${key}`, r?.send?.[server]?.[key])
      for (const key of ['streamsPerSec', 'firstEventP50', 'totalP50', 'eventsPerStream'])
        need(`runtimes ${name} stream ${server}.${key}`, r?.stream?.[server]?.[key])
    }
  }
  return missing
}
