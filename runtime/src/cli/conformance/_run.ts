import { isObject } from '../../_is-object.js'
import { isLoopbackHost } from '../_loopback.js'
import { BindingRun } from './_binding-run.js'
import { cardChecks, fetchCard } from './_card-checks.js'
import { coreChecks, unknownTaskId } from './_core-checks.js'
import { type Credentials, credentialsFor } from './_credentials.js'
import { actualOf, newSeen } from './_expect.js'
import { formChecks } from './_form-checks.js'
import { grpcWire } from './_grpc-wire.js'
import { jsonRpcWire } from './_jsonrpc-wire.js'
import { pushChecks } from './_push-checks.js'
import { restWire } from './_rest-wire.js'
import { type CheckResult, fail, Results } from './_results.js'
import { streamChecks } from './_stream-checks.js'
import type { Json, Transport, Wire, WireOptions } from './_wire.js'

export const TRANSPORTS: readonly Transport[] = ['jsonrpc', 'http_json', 'grpc']
const BINDINGS: Record<string, Transport> = { JSONRPC: 'jsonrpc', 'HTTP+JSON': 'http_json', GRPC: 'grpc' }
const V1 = /^1\.0(\.\d+)?$/

export interface RunOptions {
  cardUrl: string
  /** The transports asked for (`--transport`); every one the card declares when not given. */
  transports?: readonly Transport[]
  /** Credentials, sent to the card's own host only. */
  credentials: Credentials
  timeoutMs: number
  webhook: string
  /** Told of the card once read (what a failure's hint names comes from it). */
  onCard?(card: Json): void
}

/** A transport of the run: driven at `url`, or why not. */
interface TransportEntry {
  transport: Transport
  url?: string
  run: boolean
  reason?: string
}

export interface RunReport {
  card: string
  transports: TransportEntry[]
  results: CheckResult[]
}

/**
 * A conformance run: the card's checks, then each interface the card declares for A2A v1.0 (the first of each
 * binding) in its binding. Throws the client core's `A2AClientFailure` when nothing answers at the card's address
 * (`unreachable`, `timeout`) and when the agent refuses the credentials, or their absence (`auth-failed`,
 * `credentials-missing`).
 */
export async function runConformance(options: RunOptions): Promise<RunReport> {
  const results = new Results()
  const fetched = await fetchCard(options.cardUrl, options.timeoutMs)
  await cardChecks(results, options.cardUrl, fetched)
  const report: RunReport = { card: options.cardUrl, transports: [], results: results.all }
  if ('missing' in fetched) return report
  const card = fetched.card
  options.onCard?.(card)
  const interfaces = (Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : []).filter(
    (entry: unknown): entry is Json =>
      isObject(entry) && typeof entry.url === 'string' && V1.test(String(entry.protocolVersion)),
  )
  const cardHost = new URL(options.cardUrl).hostname
  const credentials = credentialsFor(card, options.credentials)
  for (const transport of options.transports ?? TRANSPORTS) {
    const entry = interfaces.find((found) => BINDINGS[String(found.protocolBinding).toUpperCase()] === transport)
    if (!entry) {
      if (options.transports)
        report.transports.push({ transport, run: false, reason: 'the card declares no A2A 1.0 interface of it' })
      continue
    }
    const withCredentials = sameHost(entry.url, cardHost, transport)
    const wireOptions: WireOptions = {
      ...(withCredentials && { credentials }),
      timeoutMs: options.timeoutMs,
      ...(typeof entry.tenant === 'string' && entry.tenant !== '' && { tenant: entry.tenant }),
    }
    const wire = await wireFor(transport, entry.url, wireOptions)
    if (!wire) {
      report.transports.push({
        transport,
        url: entry.url,
        run: false,
        reason:
          'needs the packages @grpc/grpc-js and @bufbuild/protobuf (npm install @grpc/grpc-js @bufbuild/protobuf)',
      })
      continue
    }
    report.transports.push({ transport, url: entry.url, run: true })
    try {
      const credentialsSent = withCredentials && credentials.sent
      await bindingChecks(new BindingRun(wire, card, results, newSeen(), options.webhook, credentialsSent), options)
    } finally {
      wire.close()
    }
  }
  return report
}

async function wireFor(transport: Transport, url: string, options: WireOptions): Promise<Wire | undefined> {
  if (transport === 'jsonrpc') return jsonRpcWire(url, options)
  if (transport === 'http_json') return restWire(url, options)
  return grpcWire(url, options)
}

async function bindingChecks(run: BindingRun, options: RunOptions): Promise<void> {
  const { results, transport } = run
  const reached = await results.check(
    'CARD-PROTO-002',
    transport,
    async () => {
      const answer = await run.wire.call('GetTask', { id: unknownTaskId() })
      return answer.problem
        ? fail(`an answer in the ${transport} binding at ${run.wire.url}`, answer.problem)
        : undefined
    },
    'the interface answers at its URL in its binding',
  )
  if (reached.status === 'fail') return
  const required = Array.isArray(run.card.securityRequirements) && run.card.securityRequirements.length > 0
  if (required) {
    await results.check('AUTH-SERVER-002', transport, async () => {
      const anonymous = await wireFor(transport, run.wire.url, { timeoutMs: options.timeoutMs })
      const answer = await anonymous!.call('GetTask', { id: unknownTaskId() })
      anonymous!.close()
      return answer.refused === 401 ? undefined : fail('HTTP 401 (UNAUTHENTICATED)', actualOf(answer))
    })
  } else results.skip('AUTH-SERVER-002', transport, 'the card requires no credentials')
  try {
    const ended = await coreChecks(run)
    await streamChecks(run, ended)
    await pushChecks(run, ended)
    await formChecks(run)
  } finally {
    await run.cleanUp()
  }
}

/** Whether an interface is on the card's host: credentials go nowhere else. */
function sameHost(url: string, cardHost: string, transport: Transport): boolean {
  const host =
    transport === 'grpc'
      ? /^(?:grpcs?:\/\/)?(\[[^\]]+\]|[^:/]+):\d+\/?$/.exec(url)?.[1]?.replace(/^\[|\]$/g, '')
      : URL.canParse(url)
        ? new URL(url).hostname.replace(/^\[|\]$/g, '')
        : undefined
  if (!host) return false
  const card = cardHost.replace(/^\[|\]$/g, '')
  return host === card || (isLoopbackHost(host) && isLoopbackHost(card))
}
