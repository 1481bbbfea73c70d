import { createRequire } from 'node:module'
import type { Command } from 'commander'
import { isObject } from '../../_is-object.js'
import { cardReference } from '../../client/_card.js'
import type { AppliedCredentials } from '../../client/_credentials.js'
import { namedCredentials } from '../../http/_credential-names.js'
import { envList } from '../../settings.js'
import { loadDotEnv } from '../_env.js'
import { chooseAgent } from '../_local-agent.js'
import { isLoopbackHost } from '../_loopback.js'
import { configuredValue } from '../config/_resolve.js'
import { type CredentialOrigin, type FailureContext, UsageError } from '../output/_failures.js'
import { createOutput } from '../output/_output.js'
import { type Credentials, credentialsFor } from './_credentials.js'
import { jsonReport, tally, textReport } from './_report.js'
import type { Level } from './_requirements.js'
import { runConformance, TRANSPORTS } from './_run.js'
import type { Json, Transport } from './_wire.js'

// Required rather than imported, as main.ts does: Node scans an imported CommonJS package for its export names first.
const { CommanderError, Option } = createRequire(import.meta.url)('commander') as typeof import('commander')

interface ConformanceFlags {
  transport?: string
  level: string
  output: string
  agent?: string
  bearer?: string
  apiKey?: string
  timeout: string
  webhook: string
}

/** The public webhook the push config checks register (on an ended task: nothing is ever sent to it). */
const DEFAULT_WEBHOOK = 'https://example.com/a2a-conformance-webhook'

export function registerConformance(program: Command): void {
  program
    .command('conformance')
    .description("Check a running agent against A2A v1.0, by the official conformance kit's requirement ids")
    .argument(
      '[agent]',
      "the agent: a host, an origin or its card's URL (default: A2ACLI_AGENT_CARD, else this project's agent)",
    )
    .option(
      '--transport <list>',
      `the bindings to check, comma-separated: ${TRANSPORTS.join(', ')} (default: every one the card declares)`,
    )
    .addOption(new Option('--level <level>', 'the requirements that count: must, should or may').default('must'))
    .addOption(new Option('-o, --output <format>', 'text or json').default('text'))
    .option('--agent <name>', "one agent of this project's server of several, at /<name>/ (default: its only one)")
    .option('--bearer <token>', 'bearer token (default: A2ACLI_BEARER)')
    .option('--api-key <key>', 'API key (default: A2ACLI_API_KEY)')
    .addOption(new Option('--timeout <seconds>', 'how long each call may take').default('10'))
    .addOption(
      new Option('--webhook <url>', 'the webhook the push config checks register (never called)').default(
        DEFAULT_WEBHOOK,
      ),
    )
    .exitOverride((error) => {
      // Usage errors exit 2 (the CLI specification's status for them); help and version stay 0.
      throw error.exitCode === 0 ? error : new CommanderError(2, error.code, error.message)
    })
    .action((agent: string | undefined, flags: ConformanceFlags) => conformance(agent, flags))
}

async function conformance(agent: string | undefined, flags: ConformanceFlags): Promise<void> {
  const json = flags.output === 'json'
  const context: FailureContext = {}
  try {
    const level = levelOf(flags.level)
    if (!['text', 'json'].includes(flags.output))
      throw new UsageError(`-o ${flags.output}: expected text or json`, HINT)
    const transports = flags.transport === undefined ? undefined : transportsOf(flags.transport)
    const timeoutSeconds = Number(flags.timeout)
    if (!(timeoutSeconds > 0))
      throw new UsageError(`--timeout ${flags.timeout}: expected a number of seconds above 0`, HINT)
    const { cardUrl, via } = await resolveAgent(agent, flags.agent)
    if (agent !== undefined) context.agentRef = agent
    if (via && !json) process.stderr.write(`→ ${cardUrl} (${via})\n`)
    const offered = credentialsOf(flags, new URL(cardUrl).hostname)
    const report = await runConformance({
      cardUrl,
      ...(transports && { transports }),
      credentials: offered.credentials,
      timeoutMs: Math.round(timeoutSeconds * 1000),
      webhook: flags.webhook,
      onCard(card) {
        context.card = card as FailureContext['card']
        const applied = credentialsFor(card, offered.credentials)
        // Where the credentials sent came from: a refusal's hint names what to fix (a flag, or the project's .env).
        const sent = KINDS.filter((kind) => offered.credentials[kind] && !applied.unused.includes(kind))
        context.credentialOrigins = sent.flatMap((kind) => offered.origins[kind] ?? [])
        for (const warning of credentialWarnings(card, applied, offered)) process.stderr.write(`Warning: ${warning}\n`)
      },
    })
    const agentName = new URL(cardUrl).origin
    process.stdout.write(json ? jsonReport(report, agentName, level) : textReport(report, agentName, level))
    process.exitCode = tally(report, level).totals.failed > 0 ? 1 : 0
  } catch (error) {
    // What stops a run before its report (a bad flag, no agent, credentials refused) is the error envelope, with
    // the code and exit status every a2a command gives it.
    process.exitCode = createOutput({ format: json ? 'json' : 'text' }).error(error, context)
  }
}

const HINT = 'see a2a conformance --help'

function levelOf(text: string): Level {
  const level = text.toUpperCase()
  if (level === 'MUST' || level === 'SHOULD' || level === 'MAY') return level
  throw new UsageError(`--level ${text}: expected must, should or may`, HINT)
}

function transportsOf(text: string): Transport[] {
  const names = text
    .split(',')
    .map((name) => name.trim().toLowerCase().replace('-', '_'))
    .filter(Boolean)
  const unknown = names.find((name) => !(TRANSPORTS as readonly string[]).includes(name))
  if (unknown !== undefined || names.length === 0)
    throw new UsageError(`--transport ${text}: expected a comma-separated list of ${TRANSPORTS.join(', ')}`, HINT)
  return [...new Set(names)] as Transport[]
}

/**
 * The agent asked for, else A2ACLI_AGENT_CARD, else this project's agent (its running a2a dev, PORT, 3000): read as
 * every a2a command reads `--agent-card` (a host or origin → its well-known card, a card URL as it is). A card file
 * names no running agent to check.
 */
async function resolveAgent(
  agent: string | undefined,
  name: string | undefined,
): Promise<{ cardUrl: string; via?: string }> {
  const given = agent ?? configuredValue('A2ACLI_AGENT_CARD')
  if (given === undefined || given.trim() === '') {
    const { base, via } = await chooseAgent(process.cwd(), undefined, name)
    return { cardUrl: new URL('.well-known/agent-card.json', base).href, ...(via && { via }) }
  }
  if (name !== undefined) await chooseAgent(process.cwd(), given, name)
  // The project's `.env` holds what an agent on this machine accepts (A2A_BEARER_TOKEN, A2A_API_KEY).
  loadDotEnv(process.cwd())
  const reference = cardReference(given)
  if ('file' in reference)
    throw new UsageError(`${given} is a card file: conformance checks a running agent`, 'give its URL or host')
  return { cardUrl: reference.url, ...(agent === undefined && { via: 'A2ACLI_AGENT_CARD' }) }
}

type Kind = 'bearer' | 'apiKey'
const KINDS: readonly Kind[] = ['bearer', 'apiKey']
const SOURCES = {
  bearer: { flag: '--bearer', variable: 'A2ACLI_BEARER', project: 'A2A_BEARER_TOKEN', takes: 'a bearer token' },
  apiKey: { flag: '--api-key', variable: 'A2ACLI_API_KEY', project: 'A2A_API_KEY', takes: 'an API key' },
} as const

interface Offered {
  credentials: Credentials
  /** Where each came from: the caller's flag or setting, or the project's own. */
  origins: Partial<Record<Kind, CredentialOrigin>>
  /** Those given as a flag on this command line. */
  fromFlag: Kind[]
}

/**
 * The flags, else the A2ACLI_* settings; for an agent on this machine also the project's own A2A_BEARER_TOKEN /
 * A2A_API_KEY, read as the local agent reads them (the first entry's secret, without its `name:`), never sent to
 * another host. A card that declares no security scheme asks for no credential: only a flag's goes to it (as with
 * every a2a command).
 */
function credentialsOf(flags: ConformanceFlags, hostname: string): Offered {
  const local = isLoopbackHost(hostname)
  const offered: Offered = { credentials: {}, origins: {}, fromFlag: [] }
  for (const kind of KINDS) {
    const flag = kind === 'bearer' ? flags.bearer : flags.apiKey
    const given = flag || configuredValue(SOURCES[kind].variable)
    const own = local && !given ? envList(process.env, SOURCES[kind].project)?.[0] : undefined
    const value = given || (own === undefined ? undefined : namedCredentials(kind, [own])[0]!.secret)
    if (!value) continue
    offered.credentials[kind] = value
    offered.origins[kind] = given ? 'given' : 'project'
    if (flag) offered.fromFlag.push(kind)
  }
  offered.credentials.withholdWithoutScheme = KINDS.filter((kind) => !offered.fromFlag.includes(kind))
  return offered
}

/** What the caller should know of the credentials given, once the card said where they go (or that none do). */
function credentialWarnings(card: Json, applied: AppliedCredentials, offered: Offered): string[] {
  const declaresNone = !isObject(card.securitySchemes) || Object.keys(card.securitySchemes).length === 0
  return KINDS.flatMap((kind) => {
    const { flag, variable, takes } = SOURCES[kind]
    const named = offered.fromFlag.includes(kind) ? flag : variable
    if (applied.undeclared.includes(kind)) return [`${named} is sent, though the card declares no security scheme`]
    if (!applied.unused.includes(kind) || offered.origins[kind] !== 'given') return []
    return declaresNone
      ? [`${named} is not sent: the card declares no security scheme (pass ${flag} to send one all the same)`]
      : [`${named} is not sent: the card declares no scheme that takes ${takes}`]
  })
}
