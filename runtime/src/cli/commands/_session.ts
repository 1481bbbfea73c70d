import type { Command } from 'commander'
import { cardReference } from '../../client/_card.js'
import { type A2AClient, connect, type WireEntry } from '../../client/client.js'
import type { AgentCard } from '../../client/types.js'
import { namedCredentials } from '../../http/_credential-names.js'
import { envList } from '../../settings.js'
import { loadDotEnv, skipTlsChecks } from '../_env.js'
import { chooseAgent } from '../_local-agent.js'
import { isLoopbackHost } from '../_loopback.js'
import { storedBearer } from '../auth/_stored-bearer.js'
import { resolveOptions } from '../config/_resolve.js'
import { UsageError } from '../output/_failures.js'
import { createOutput, type Output } from '../output/_output.js'
import { printableLine } from '../output/_sanitize.js'
import { parseDuration } from './_durations.js'

/** The settings of a command that talks to an agent, resolved from its flags, the environment and `.env` files. */
interface ClientSettings {
  /** The `--agent-card` given (flag, variable or file), repeated in the commands printed; none for the default. */
  agentRef: string | undefined
  transports: string[]
  a2aVersion: string
  bearer: string | undefined
  apiKey: string | undefined
  serviceParams: Record<string, string>
  /** The wait's limit, whole command (`--timeout`). */
  timeoutMs: number | undefined
  insecure: boolean
  debug: boolean
  values: Record<string, unknown>
}

/** What an action gets: its settings, its output, the connected client, and a signal that Ctrl-C aborts. */
export interface Session {
  settings: ClientSettings
  output: Output
  signal: AbortSignal
  /** Connects once: reads the card and chooses the interface. */
  client(): Promise<A2AClient>
  /** The card, once connected (for hints). */
  card: AgentCard | undefined
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
  let card: AgentCard | undefined
  let settings: ClientSettings | undefined
  try {
    const resolved = resolveOptions(command)
    settings = settingsOf(resolved.values)
    output = createOutput({
      format: formatOf(resolved.values),
      verbose: resolved.values.verbose === true,
      agentRef: settings.agentRef,
    })
    let connected: A2AClient | undefined
    const session: Session = {
      settings,
      output,
      signal: controller.signal,
      get card() {
        return card
      },
      async client() {
        connected ??= await connectWith(settings!, controller.signal)
        card = connected.card
        return connected
      },
    }
    process.exitCode = await action(session)
  } catch (error) {
    if (error instanceof Interrupted || controller.signal.reason instanceof Interrupted) process.exitCode = 130
    else process.exitCode = output.error(error, { card, agentRef: settings?.agentRef })
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

function settingsOf(values: Record<string, unknown>): ClientSettings {
  const agentRef = (values.agentCard ?? values.url) as string | undefined
  const serviceParams: Record<string, string> = {}
  for (const pair of (values.svcParam as string[] | undefined) ?? []) {
    const at = pair.indexOf(':')
    if (at <= 0) throw new UsageError(`--svc-param: '${pair}' is not key:value`)
    serviceParams[pair.slice(0, at).trim()] = pair.slice(at + 1).trim()
  }
  return {
    agentRef: agentRef === '' ? undefined : agentRef,
    transports: (values.transport as string[] | undefined) ?? [],
    a2aVersion: (values.a2aVersion as string | undefined) ?? '1.0',
    bearer: (values.bearer ?? values.token) as string | undefined,
    apiKey: values.apiKey as string | undefined,
    serviceParams,
    timeoutMs: values.timeout === undefined ? undefined : parseDuration(String(values.timeout), '--timeout'),
    insecure: values.insecure === true,
    debug: values.debug === true,
    values,
  }
}

async function connectWith(settings: ClientSettings, signal: AbortSignal): Promise<A2AClient> {
  const cwd = process.cwd()
  let agentCard: string
  if (settings.agentRef === undefined) agentCard = (await chooseAgent(cwd, undefined)).base.href
  else {
    // The project's `.env` holds what an agent on this machine accepts (A2A_BEARER_TOKEN, A2A_API_KEY).
    loadDotEnv(cwd)
    agentCard = settings.agentRef
  }
  if (!/^1(\.\d+)?$/.test(settings.a2aVersion))
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
    let bearer = settings.bearer ?? project.bearer
    if (bearer === undefined && 'url' in reference) bearer = await storedBearer(reference.url)
    return connect({
      agentCard,
      transports: settings.transports,
      a2aVersion: settings.a2aVersion,
      bearer,
      apiKey: settings.apiKey ?? project.apiKey,
      serviceParams: settings.serviceParams,
      wire: settings.debug ? logWire : undefined,
      signal,
    })
  }
  const client = await connectOffering(local)
  // A card served on this machine may still name an interface elsewhere (the agent's public address): the project's
  // own credential stays here, so the client is made again without it.
  const usesLocal = local.bearer !== undefined || local.apiKey !== undefined
  if (usesLocal && !isLoopbackHost(new URL(client.selected.url).hostname)) return connectOffering({})
  return client
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
