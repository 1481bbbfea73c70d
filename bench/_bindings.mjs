// The binding rows (issue 35): ours, one `a2a start` of the generated project with gRPC on (A2A_GRPC_PORT=0, the
// port read back from the card's GRPC interface), answers the same A2A v1.0 send and streaming send over each of
// its bindings: JSON-RPC (`SendMessage` / `SendStreamingMessage` on POST /), HTTP+JSON (POST /message:send,
// /message:stream) and gRPC (lf.a2a.v1.A2AService, unary and server stream). The HTTP loads are the main rows'
// (autocannon, stream-load.mjs); gRPC's is grpc-load.mjs. All on the load core, at the same concurrency, each row in
// rounds that take the bindings in turn, alternating the order; every answer checked, before the load and during it.
import { performance } from 'node:perf_hooks'
import { launch, verify } from './_server.mjs'
import { ECHOED, TEXT, v1, v1Rest } from './_targets.mjs'
import { alternatingRounds, requestFailure, runLoad, sendRow, streamFailure, streamRow } from './_workloads.mjs'

// The calls in flight spread over 4 channels: what lets grpc-load.mjs offer the most (see there).
const GRPC_CHANNELS = 4

/** The first failure a gRPC row saw, beside its counts. */
const firstFailure = (result) =>
  result.failures?.length ? ` (first: ${JSON.stringify(result.failures[0]).slice(0, 300)})` : ''

/** One gRPC row: grpc-load.mjs against the server's gRPC address. */
async function grpcRow(method, server, { concurrency, profile, pinning, warm }) {
  const config = {
    address: server.grpcAddress,
    method,
    concurrency,
    channels: GRPC_CHANNELS,
    durationSec: profile.durationSec,
    maxCalls: profile.maxRequests,
    warmupSec: warm ? profile.warmupSec : 0,
    text: TEXT,
    expected: ECHOED,
  }
  const result = await runLoad('grpc-load.mjs', config, { pinning, server })
  const failed = method === 'stream' ? streamFailure(result) : requestFailure(result)
  return { ...result, connections: concurrency, failed: failed && failed + firstFailure(result) }
}

const http = (name, label, dialect) => ({
  name,
  label,
  dialect,
  send: (server, options) => sendRow({ dialect }, server, options.concurrency, options),
  stream: (server, options) => streamRow({ dialect }, server, options),
  // The HTTP bindings are checked by the main rows' full check (_server.mjs verify).
  verify: async (server) => (await verify({ name, dialect }, server)).eventsPerStream,
})

/** The bindings in the order of the rows; JSON-RPC is the one the others are compared with. */
export const BINDINGS = [
  http('jsonrpc', 'JSON-RPC (POST /, SendMessage / SendStreamingMessage)', v1),
  http('rest', 'HTTP+JSON (POST /message:send, /message:stream)', v1Rest),
  {
    name: 'grpc',
    label: 'gRPC (lf.a2a.v1.A2AService SendMessage / SendStreamingMessage)',
    send: (server, options) => grpcRow('send', server, options),
    stream: (server, options) => grpcRow('stream', server, options),
    // One call of each, checked in full as every call of the load is.
    async verify(server) {
      const options = { concurrency: 1, profile: { durationSec: 30, maxRequests: 1 }, pinning: server.pinning }
      const send = await grpcRow('send', server, options)
      const stream = await grpcRow('stream', server, options)
      const failed = send.failed ?? stream.failed
      if (failed || send.requests !== 1 || stream.streams !== 1)
        throw new Error(`grpc did not answer correctly: ${failed ?? 'no answer'}\n${server.handle.output.slice(-2000)}`)
      return stream.eventsPerStream
    },
  },
]

/**
 * The gRPC address the server's v1.0 card lists (`host:port`). serveAgent starts gRPC once HTTP listens, so the
 * card may answer a moment before it lists the interface: polled for up to 30 s.
 */
async function grpcAddressOf(server) {
  const deadline = performance.now() + 30_000
  for (;;) {
    const response = await fetch(new URL('.well-known/agent-card.json', server.url))
    const card = await response.json()
    const grpc = card.supportedInterfaces?.find((entry) => entry.protocolBinding === 'GRPC')
    if (grpc) return grpc.url
    if (!server.handle.alive || performance.now() > deadline)
      throw new Error(`ours lists no GRPC interface with A2A_GRPC_PORT set:\n${server.handle.output.slice(-2000)}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * Starts ours with gRPC on, checks each binding, then measures the send row (c = profile.targetConcurrency) and the
 * stream row (c = profile.streamConcurrency) over every binding. Resolves with { send, stream, eventsPerStream },
 * send and stream by binding name as alternatingRounds gives them.
 */
export async function bindingRows(ours, { profile, pinning, log }) {
  const server = await launch(ours, { pinning, env: { A2A_GRPC_PORT: '0' } })
  try {
    server.grpcAddress = await grpcAddressOf(server)
    server.pinning = pinning
    const eventsPerStream = {}
    for (const binding of BINDINGS) eventsPerStream[binding.name] = await binding.verify(server)
    log(`bindings: each answers correctly (events per stream ${JSON.stringify(eventsPerStream)})`)
    const send = await alternatingRounds(BINDINGS, profile.rounds, 'rps', (binding, warm) =>
      binding.send(server, { concurrency: profile.targetConcurrency, profile, pinning, warm }),
    )
    const stream = await alternatingRounds(BINDINGS, profile.rounds, 'streamsPerSec', (binding, warm) =>
      binding.stream(server, { concurrency: profile.streamConcurrency, profile, pinning, warm }),
    )
    for (const [label, rows] of [
      ['SendMessage', send],
      ['SendStreamingMessage', stream],
    ]) {
      const rounds = BINDINGS.map((b) => `${b.name} ${rows[b.name].rounds.map(Math.round).join('/')}`)
      log(`bindings ${label}: ${rounds.join(', ')} /s`)
    }
    return { send, stream, eventsPerStream }
  } finally {
    await server.stop()
  }
}

/** Problems of the binding rows: a failed row, or bindings whose streams carry different numbers of events. */
export function bindingProblems(bindings) {
  const problems = []
  for (const [row, rows] of [
    ['SendMessage', bindings?.send ?? {}],
    ['SendStreamingMessage', bindings?.stream ?? {}],
  ]) {
    for (const [name, result] of Object.entries(rows))
      if (result.failed) problems.push(`bindings ${row} ${name}: ${result.failed}`)
  }
  const events = new Set(Object.values(bindings?.stream ?? {}).map((row) => row.eventsPerStream))
  if (events.size > 1) problems.push(`events per stream differ between bindings: ${[...events].join(', ')}`)
  return problems
}
