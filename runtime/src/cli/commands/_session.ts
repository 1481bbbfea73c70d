import type { Command } from 'commander'
import { cardReference } from '../../client/_card.js'
import { speaksVersion } from '../../client/_select.js'
import { type A2AClient, connect, type WireEntry } from '../../client/client.js'
import type { AgentCard } from '../../client/types.js'
import { namedCredentials } from '../../http/_credential-names.js'
import { envList } from '../../settings.js'
import { givenTraceTelemetry, isTraceparent, type TraceContext } from '../../telemetry/_client-traceparent.js'
import { loadDotEnv, skipTlsChecks } from '../_env.js'
import { chooseAgent } from '../_local-agent.js'
import { isLoopbackHost } from '../_loopback.js'
import { storedBearer } from '../auth/_stored-bearer.js'
import { type ResolvedOptions, resolveOptions } from '../config/_resolve.js'
import { type CredentialOrigin, type FailureContext, UsageError } from '../output/_failures.js'
import { createOutput, type Output } from '../output/_output.js'
import { printableLine } from '../output/_sanitize.js'
import { parseDuration } from './_durations.js'
import { timeoutOr } from './_wait.js'

/** The settings of a command that talks to an agent, resolved from its flags, the environment and `.env` files. */
interface ClientSettings {
  /** The `--agent-card` given (flag, variable or file), repeated in the commands printed; none for the default. */
  agentRef: string | undefined
  /** `--agent`: one agent of the project's server of several. */
  agentName: string | undefined
  transports: string[]
  a2aVersion: string
  bearer: string | undefined
  apiKey: string | undefined
  serviceParams: Record<string, string>
  /** The whole command's limit (`--timeout`): the card, every call, every wait. */
  timeoutMs: number | undefined
  insecure: boolean
  debug: boolean
  values: Record<string, unknown>
  /** The options set by a flag on this command line (their commander names): a flag outranks any configured value. */
  flags: ReadonlySet<string>
  /** Which credentials a flag gave (not the environment or a file). */
  flagged: { bearer: boolean; apiKey: boolean }
  /** Other secrets the command sends (a webhook's token and credentials), redacted like the credentials. */
  secrets: string[]
  /** The trace every request carries (`--traceparent`, else `TRACEPARENT`); none by default. */
  trace: TraceContext | undefined
}

/**
 * What an action gets: its settings, its output, the connected client, and a signal that Ctrl-C and `--timeout`
 * abort.
 */
export interface Session {
  settings: ClientSettings
  output: Output
  /** Aborted by Ctrl-C, or when `--timeout` runs out (its reason then a TimeoutError): pass it to every call. */
  signal: AbortSignal
  /** When `--timeout` runs out (Date.now() scale); none without one. */
  deadline: number | undefined
  /** Ctrl-C stopped the command: it ends without an error (what it knew is already said). */
  readonly interrupted: boolean
  /** Connects once: reads the card and chooses the interface. */
  client(): Promise<A2AClient>
  /** The card, once connected (for hints). */
  card: AgentCard | undefined
  /**
   * Reports a failure as the error envelope and answers its exit status: a step cut by `--timeout` as the timeout,
   * the hint made from what the session knows (the card, where the credential sent came from) and `context`.
   */
  fail(error: unknown, context?: FailureContext): number
}

export type SessionAction = (session: Session) => Promise<number>

/**
 * Runs a client command: resolves its settings, makes its output, and reports any failure as the error envelope
 * with its exit status (never a stack). Ctrl-C aborts the session's signal; the action says what it knew.
 */
export async function runSession(command: Command, action: SessionAction): Promise<void> {
  let output = createOutput({ format: formatOf(command.opts()) })
  const controller = new AbortController()
  const interrupt = () => controller.abort(new Interrupted())
  process.once('SIGINT', interrupt)
  let signal: AbortSignal = controller.signal
  let card: AgentCard | undefined
  let settings: ClientSettings | undefined
  let origins: CredentialOrigin[] = []
  const fail = (error: unknown, context: FailureContext = {}) =>
    output.error(timeoutOr(error, signal), {
      card,
      agentRef: settings?.agentRef,
      ...(origins.length > 0 && { credentialOrigins: origins }),
      ...context,
    })
  try {
    const resolved = resolveOptions(command)
    settings = settingsOf(resolved)
    const deadline = settings.timeoutMs === undefined ? undefined : Date.now() + settings.timeoutMs
    // --timeout bounds the whole command: the card, each call, each wait (the timer never keeps the process up).
    if (settings.timeoutMs !== undefined)
      signal = AbortSignal.any([controller.signal, AbortSignal.timeout(settings.timeoutMs)])
    output = createOutput({
      format: formatOf(resolved.values),
      verbose: resolved.values.verbose === true,
      agentRef: settings.agentRef,
    })
    let connected: A2AClient | undefined
    const session: Session = {
      settings,
      output,
      signal,
      deadline,
      get interrupted() {
        return controller.signal.reason instanceof Interrupted
      },
      get card() {
        return card
      },
      async client() {
        if (connected === undefined) {
          const made = await connectWith(settings!, signal, output)
          connected = made.client
          origins = made.origins
        }
        card = connected.card
        return connected
      },
      fail,
    }
    process.exitCode = await action(session)
  } catch (error) {
    if (error instanceof Interrupted || controller.signal.reason instanceof Interrupted) process.exitCode = 130
    else process.exitCode = fail(error)
  } finally {
    process.off('SIGINT', interrupt)
  }
}

/** Ctrl-C: the command stops waiting; what it knew of the task is already on the screen. */
class Interrupted extends Error {
  constructor() {
    super('interrupted')
  }
}

const formatOf = (values: Record<string, unknown>): 'text' | 'json' =>
  values.output === 'json' || values.json === true ? 'json' : 'text'

function settingsOf({ values, options }: ResolvedOptions): ClientSettings {
  const flags = new Set(options.filter((option) => option.source.kind === 'flag').map((option) => option.attribute))
  const agentRef = (values.agentCard ?? values.url) as string | undefined
  const serviceParams: Record<string, string> = {}
  for (const pair of (values.svcParam as string[] | undefined) ?? []) {
    const at = pair.indexOf(':')
    if (at <= 0) throw new UsageError(`--svc-param: '${pair}' is not key:value`)
    serviceParams[pair.slice(0, at).trim()] = pair.slice(at + 1).trim()
  }
  return {
    agentRef: agentRef === '' ? undefined : agentRef,
    agentName: (values.agent as string | undefined) || undefined,
    transports: (values.transport as string[] | undefined) ?? [],
    a2aVersion: (values.a2aVersion as string | undefined) ?? '1.0',
    bearer: (values.bearer ?? values.token) as string | undefined,
    apiKey: values.apiKey as string | undefined,
    serviceParams,
    timeoutMs: values.timeout === undefined ? undefined : parseDuration(String(values.timeout), '--timeout'),
    insecure: values.insecure === true,
    debug: values.debug === true,
    values,
    flags,
    flagged: { bearer: flags.has('bearer') || flags.has('token'), apiKey: flags.has('apiKey') },
    secrets: [values.webhookToken, values.authCredentials].filter(
      (value): value is string => typeof value === 'string' && value !== '',
    ),
    trace: traceOf(values.traceparent as string | undefined, process.env),
  }
}

/**
 * The trace the command's requests join: `--traceparent` (or `A2ACLI_TRACEPARENT`), else OpenTelemetry's environment
 * carriers for command-line tools, `TRACEPARENT` with its `TRACESTATE`, which a traced script or CI job sets for what
 * it runs. A value that is not a W3C traceparent stops the command, naming where it came from.
 */
function traceOf(option: string | undefined, env: NodeJS.ProcessEnv): TraceContext | undefined {
  const given = option ?? (env.TRACEPARENT || undefined)
  if (given === undefined) return undefined
  const value = given.trim()
  if (!isTraceparent(value))
    throw new UsageError(
      `${option === undefined ? 'TRACEPARENT' : '--traceparent'}: '${printableLine(given).slice(0, 80)}' is not a ` +
        'W3C traceparent (00-<32 hex trace id>-<16 hex span id>-<2 hex flags>)',
    )
  // TRACESTATE goes with the TRACEPARENT it was set beside, never with a traceparent given on the command line.
  const tracestate = option === undefined ? env.TRACESTATE?.trim() || undefined : undefined
  return { traceparent: value, tracestate }
}

/** The client, and where each credential it sends came from (for the hint of a refusal). */
async function connectWith(
  settings: ClientSettings,
  signal: AbortSignal,
  output: Output,
): Promise<{ client: A2AClient; origins: CredentialOrigin[] }> {
  const cwd = process.cwd()
  let agentCard: string
  // Why this agent, when the caller named none: said beside its address, so the agent addressed is never a guess.
  let chosen: string | undefined
  if (settings.agentRef === undefined) {
    const { base, via } = await chooseAgent(cwd, undefined, settings.agentName)
    agentCard = base.href
    chosen = via
  } else {
    if (settings.agentName !== undefined) await chooseAgent(cwd, settings.agentRef, settings.agentName)
    // The project's `.env` holds what an agent on this machine accepts (A2A_BEARER_TOKEN, A2A_API_KEY).
    loadDotEnv(cwd)
    agentCard = settings.agentRef
  }
  if (!speaksVersion(settings.a2aVersion))
    throw new UsageError(
      `--a2a-version: '${settings.a2aVersion}' is not an A2A version this client speaks (1.0)`,
      'versions before 1.0 are not spoken by a2a; leave --a2a-version unset for 1.0',
    )
  if (settings.insecure) {
    process.stderr.write(
      'Warning: --insecure: TLS certificates are not checked; anyone on the way can read and change what is sent, ' +
        'credentials included\n',
    )
    skipTlsChecks()
  }
  const reference = cardReference(agentCard)
  const local = {
    bearer: settings.bearer === undefined ? localSecret(reference, 'A2A_BEARER_TOKEN', 'bearer') : undefined,
    apiKey: settings.apiKey === undefined ? localSecret(reference, 'A2A_API_KEY', 'apiKey') : undefined,
  }
  const connectOffering = async (project: { bearer?: string; apiKey?: string }) => {
    const offered: Record<'bearer' | 'apiKey', CredentialOrigin | undefined> = {
      bearer: settings.bearer !== undefined ? 'given' : project.bearer !== undefined ? 'project' : undefined,
      apiKey: settings.apiKey !== undefined ? 'given' : project.apiKey !== undefined ? 'project' : undefined,
    }
    let bearer = settings.bearer ?? project.bearer
    if (bearer === undefined && 'url' in reference) {
      bearer = await storedBearer(reference.url)
      if (bearer !== undefined) offered.bearer = 'stored'
    }
    const client = await connect({
      agentCard,
      transports: settings.transports,
      a2aVersion: settings.a2aVersion,
      bearer,
      apiKey: settings.apiKey ?? project.apiKey,
      // A card that declares no scheme gets only a credential given on this command line, never a configured one.
      withholdWithoutScheme: (['bearer', 'apiKey'] as const).filter((kind) => !settings.flagged[kind]),
      secrets: settings.secrets,
      serviceParams: settings.serviceParams,
      wire: settings.debug ? logWire : undefined,
      ...(settings.trace && { telemetry: givenTraceTelemetry(settings.trace) }),
      signal,
    })
    return { client, offered }
  }
  let connected = await connectOffering(local)
  // A card served on this machine may still name an interface elsewhere (the agent's public address): the project's
  // own credential stays here, so the client is made again without it.
  const usesLocal = local.bearer !== undefined || local.apiKey !== undefined
  if (usesLocal && !isLoopbackHost(new URL(connected.client.selected.url).hostname))
    connected = await connectOffering({})
  const { client, offered } = connected
  if (settings.agentRef === undefined)
    process.stderr.write(`→ ${printableLine(client.card.name)} at ${agentCard}${chosen ? ` (${chosen})` : ''}\n`)
  // A credential the caller set that the card gives no place to is not sent; one sent to a card that asks for none
  // goes where agents usually look. Either is said, so a refusal is understood.
  for (const kind of client.unusedCredentials) if (offered[kind] === 'given') output.warn(UNUSED[kind])
  for (const kind of client.undeclaredCredentials) output.warn(UNDECLARED[kind])
  const origins = (['bearer', 'apiKey'] as const)
    .filter((kind) => !client.unusedCredentials.includes(kind))
    .map((kind) => offered[kind])
    .filter((origin) => origin !== undefined)
  return { client, origins }
}

const UNUSED = {
  bearer:
    "--bearer (A2ACLI_BEARER) was not sent: the agent's card declares no scheme that takes a bearer token " +
    '(a2a card get lists its security schemes; a configured token goes only where a scheme asks for it)',
  apiKey:
    "--api-key (A2ACLI_API_KEY) was not sent: the agent's card declares no API key scheme " +
    '(a2a card get lists its security schemes; a configured key goes only where a scheme asks for it)',
}

const UNDECLARED = {
  bearer: "the agent's card declares no security scheme: --bearer was sent as Authorization: Bearer all the same",
  apiKey: "the agent's card declares no security scheme: --api-key was sent as X-API-Key all the same",
}

/**
 * The project's own credential (its `.env` or environment), offered only to an agent on this machine: it is what
 * the project's agent accepts, and must never travel to another host.
 */
function localSecret(
  reference: ReturnType<typeof cardReference>,
  variable: 'A2A_BEARER_TOKEN' | 'A2A_API_KEY',
  scheme: 'bearer' | 'apiKey',
): string | undefined {
  if (!('url' in reference) || !isLoopbackHost(new URL(reference.url).hostname)) return undefined
  const listed = envList(process.env, variable)
  return listed && listed.length > 0 ? namedCredentials(scheme, listed)[0]?.secret : undefined
}

/** `--debug`: each exchange on stderr, already redacted by the client core. */
function logWire(entry: WireEntry): void {
  const line = (text: string) => process.stderr.write(`debug: ${printableLine(text)}\n`)
  if (entry.type === 'request') {
    line(`→ ${entry.method} ${entry.url} ${JSON.stringify(entry.headers)}`)
    if (entry.body !== undefined) line(`→ ${entry.body}`)
  } else if (entry.type === 'response') {
    line(`← ${entry.status} ${entry.url} (${Math.round(entry.elapsedMs)} ms) ${JSON.stringify(entry.headers)}`)
    if (entry.body !== undefined) line(`← ${entry.body}`)
  } else
    line(`← event${entry.id === undefined ? '' : ` ${entry.id}`} (${Math.round(entry.elapsedMs)} ms) ${entry.data}`)
}
