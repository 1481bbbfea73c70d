import { createRequire } from 'node:module'
import type { Command } from 'commander'
import { envList } from '../../settings.js'
import { chooseAgent } from '../_local-agent.js'
import { isLoopbackHost } from '../_loopback.js'
import { configuredValue } from '../config/_resolve.js'
import { cardUrlOf, NotAnAgent } from './_agent-card-url.js'
import { CredentialsRefused } from './_binding-run.js'
import { AgentUnreachable } from './_card-checks.js'
import type { Credentials } from './_credentials.js'
import { jsonReport, tally, textReport } from './_report.js'
import type { Level } from './_requirements.js'
import { runConformance, TRANSPORTS } from './_run.js'
import type { Transport } from './_wire.js'

// Required rather than imported, as main.ts does: Node scans an imported CommonJS package for its export names first.
const { CommanderError, Option } = createRequire(import.meta.url)('commander') as typeof import('commander')

interface ConformanceFlags {
  transport?: string
  level: string
  output: string
  bearer?: string
  apiKey?: string
  timeout: string
  webhook: string
}

/** The public webhook the push config checks register (on an ended task: nothing is ever sent to it). */
const DEFAULT_WEBHOOK = 'https://example.com/a2a-conformance-webhook'

/** The CLI specification's codes for what stops a run before its report, and the exit status of each. */
const STOPS = {
  A2ACLI_ERR_USAGE: 2,
  A2ACLI_ERR_UNREACHABLE: 3,
  A2ACLI_ERR_AUTH_FAILED: 4,
} as const

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
  try {
    const level = levelOf(flags.level)
    if (!['text', 'json'].includes(flags.output)) throw new UsageError(`-o ${flags.output}: expected text or json`)
    const transports = flags.transport === undefined ? undefined : transportsOf(flags.transport)
    const timeoutSeconds = Number(flags.timeout)
    if (!(timeoutSeconds > 0)) throw new UsageError(`--timeout ${flags.timeout}: expected a number of seconds above 0`)
    const { cardUrl, via } = await resolveAgent(agent)
    if (via && !json) process.stderr.write(`→ ${cardUrl} (${via})\n`)
    const report = await runConformance({
      cardUrl,
      ...(transports && { transports }),
      credentials: credentialsOf(flags, new URL(cardUrl).hostname),
      timeoutMs: Math.round(timeoutSeconds * 1000),
      webhook: flags.webhook,
    })
    const agentName = new URL(cardUrl).origin
    process.stdout.write(json ? jsonReport(report, agentName, level) : textReport(report, agentName, level))
    process.exitCode = tally(report, level).totals.failed > 0 ? 1 : 0
  } catch (error) {
    const stop =
      error instanceof UsageError || error instanceof NotAnAgent
        ? { code: 'A2ACLI_ERR_USAGE' as const, hint: 'see a2a conformance --help' }
        : error instanceof AgentUnreachable
          ? { code: 'A2ACLI_ERR_UNREACHABLE' as const, hint: 'is the agent running at that address?' }
          : error instanceof CredentialsRefused
            ? { code: 'A2ACLI_ERR_AUTH_FAILED' as const, hint: 'or set A2ACLI_BEARER / A2ACLI_API_KEY' }
            : undefined
    if (!stop) throw error
    const message = (error as Error).message
    if (json) process.stdout.write(`${JSON.stringify({ error: { code: stop.code, message, hint: stop.hint } })}\n`)
    else process.stderr.write(`Error: ${message}\nCode: ${stop.code}\nHint: ${stop.hint}\n`)
    process.exitCode = STOPS[stop.code]
  }
}

class UsageError extends Error {}

function levelOf(text: string): Level {
  const level = text.toUpperCase()
  if (level === 'MUST' || level === 'SHOULD' || level === 'MAY') return level
  throw new UsageError(`--level ${text}: expected must, should or may`)
}

function transportsOf(text: string): Transport[] {
  const names = text
    .split(',')
    .map((name) => name.trim().toLowerCase().replace('-', '_'))
    .filter(Boolean)
  const unknown = names.find((name) => !(TRANSPORTS as readonly string[]).includes(name))
  if (unknown !== undefined || names.length === 0)
    throw new UsageError(`--transport ${text}: expected a comma-separated list of ${TRANSPORTS.join(', ')}`)
  return [...new Set(names)] as Transport[]
}

/** The agent asked for, else A2ACLI_AGENT_CARD, else this project's agent (its running a2a dev, PORT, 3000). */
async function resolveAgent(agent: string | undefined): Promise<{ cardUrl: string; via?: string }> {
  const given = agent ?? configuredValue('A2ACLI_AGENT_CARD')
  if (given !== undefined && given.trim() !== '')
    return { cardUrl: cardUrlOf(given), ...(agent === undefined && { via: 'A2ACLI_AGENT_CARD' }) }
  const { base, via } = await chooseAgent(process.cwd(), undefined)
  return { cardUrl: new URL('.well-known/agent-card.json', base).href, ...(via && { via }) }
}

/**
 * The flags, else the A2ACLI_* environment; for an agent on this machine also the project's own A2A_BEARER_TOKEN /
 * A2A_API_KEY (what the local agent accepts; never sent to another host).
 */
function credentialsOf(flags: ConformanceFlags, hostname: string): Credentials {
  const local = isLoopbackHost(hostname)
  const bearer =
    flags.bearer ??
    configuredValue('A2ACLI_BEARER') ??
    (local ? envList(process.env, 'A2A_BEARER_TOKEN')?.[0] : undefined)
  const apiKey =
    flags.apiKey ?? configuredValue('A2ACLI_API_KEY') ?? (local ? envList(process.env, 'A2A_API_KEY')?.[0] : undefined)
  return { ...(bearer && { bearer }), ...(apiKey && { apiKey }) }
}
