import { type Command, Option } from 'commander'
import { takesConfiguration } from '../config/_configurable.js'
import { resolveOptions } from '../config/_resolve.js'
import { UsageError } from '../output/_failures.js'
import { createOutput } from '../output/_output.js'
import { printableLine } from '../output/_sanitize.js'
import { cardUrlOf } from './_agent-card.js'
import { type OutputFormat, print, summaryLines, tokenSummary } from './_auth-output.js'
import type { Flow } from './_authorization-server.js'
import { login } from './_login.js'
import { readTokens, tokenFilePath, writeTokens } from './_token-file.js'
import { withTokenLock } from './_token-lock.js'

/** The settings of an `a2a auth` command, each from its flag, its `A2ACLI_*` variable or a `.env` file. */
interface AuthSettings {
  output?: string
  agentCard?: string
  flow?: string
  clientId?: string
  clientSecret?: string
  scope?: string[]
  issuer?: string
}

const FLOWS: readonly Flow[] = ['device', 'client-credentials']

const AGENT_CARD = "the agent: its card's URL, its origin or host, or a card file (default: this project's agent)"
const CONFIG = 'read A2ACLI_* settings from this .env file instead of the nearest .env'
const outputOption = () => new Option('-o, --output <format>', 'text or json').choices(['text', 'json']).default('text')

/** `a2a auth login|status|logout`: OAuth 2.x tokens for agents, kept in the user's configuration folder. */
export function registerAuth(program: Command): void {
  const auth = program
    .command('auth')
    .description('Log in to agents with OAuth 2.x (device code, client credentials) and manage the stored tokens')
  takesConfiguration(auth.command('login'))
    .description(
      "Get an OAuth token for an agent from the authorization server its card names, and store it for the agent's " +
        'later calls',
    )
    .option('-a, --agent-card <ref>', AGENT_CARD)
    .option('--flow <flow>', 'device or client-credentials (default: device where offered)')
    .option('--client-id <id>', "this CLI's client id at the authorization server")
    .option(
      '--client-secret <secret>',
      'the client secret, for client-credentials (prefer A2ACLI_CLIENT_SECRET: other users of this machine can ' +
        'read a command line in the process list, and it stays in the shell history)',
    )
    .option('--scope <scope...>', 'scopes to ask for (default: what the card requires)')
    .option('--issuer <url>', "the authorization server, over the card's")
    .option('--config <path>', CONFIG)
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nEach option may also be set by its A2ACLI_<OPTION> variable or an .env file (a2a config show lists them).\n' +
        'The device flow prints a verification URL and a user code on stderr and waits for the approval; it never ' +
        'reads input.\nTokens are kept in $XDG_CONFIG_HOME/a2a-cli/tokens.json (else ~/.config/a2a-cli/), readable ' +
        'by you alone.',
    )
    .action((_flags: unknown, command: Command) => run(command, loginAction))
  takesConfiguration(auth.command('status'))
    .description('List the agents with a stored token: issuer, flow, scope and expiry (never the token)')
    .option('--config <path>', CONFIG)
    .addOption(outputOption())
    .action((_flags: unknown, command: Command) => run(command, statusAction))
  // Its settings resolve as the others' do, but it is not listed among the configurable commands: `--all` removes
  // every token, so only the command line says it (no A2ACLI_ALL).
  auth
    .command('logout')
    .description("Remove the stored tokens of an agent (by default this project's agent)")
    .option('-a, --agent-card <ref>', AGENT_CARD)
    .option('--all', "remove every agent's tokens")
    .option('--config <path>', CONFIG)
    .addOption(outputOption())
    .action((flags: { all?: boolean; agentCard?: string }, command: Command) =>
      run(command, async (settings, format) => {
        // Only a flag conflicts with --all: an agent configured in the environment or a file is simply not used.
        if (flags.all && flags.agentCard !== undefined)
          throw new UsageError('--all and --agent-card cannot go together', 'pass one of them')
        await logoutAction(flags.all ? undefined : settings.agentCard, format, flags.all === true)
      }),
    )
}

/**
 * Runs an action with its settings resolved (flag > A2ACLI_* variable > local .env > global .env > default); a
 * failure becomes the output contract's error envelope and its exit status, never a stack.
 */
async function run(command: Command, action: (settings: AuthSettings, format: OutputFormat) => Promise<void>) {
  let format: OutputFormat = command.getOptionValue('output') === 'json' ? 'json' : 'text'
  let agentRef: string | undefined
  try {
    const settings = resolveOptions(command).values as AuthSettings
    format = settings.output === 'json' ? 'json' : 'text'
    agentRef = settings.agentCard
    await action(settings, format)
  } catch (error) {
    process.exitCode = createOutput({ format }).error(error, { agentRef })
  }
}

async function loginAction(settings: AuthSettings, format: OutputFormat): Promise<void> {
  const flow = settings.flow
  if (flow !== undefined && !FLOWS.includes(flow as Flow))
    throw new UsageError(`--flow must be device or client-credentials (got ${JSON.stringify(flow)})`)
  const { token, path } = await login(
    {
      agentCard: settings.agentCard,
      flow: flow as Flow | undefined,
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      scope: settings.scope,
      issuer: settings.issuer,
    },
    (line) => process.stderr.write(`${printableLine(line)}\n`),
  )
  print(format, [...summaryLines(token), `Token file: ${path}`], { ...tokenSummary(token), tokenFile: path })
}

async function statusAction(_settings: AuthSettings, format: OutputFormat): Promise<void> {
  const path = tokenFilePath()
  const tokens = readTokens(path)
  const blocks = tokens.map((token) => [...summaryLines(token), ''])
  print(format, [`Token file: ${path}`, `Tokens: ${tokens.length}`, '', ...blocks.flat()].slice(0, -1), {
    tokenFile: path,
    tokens: tokens.map((token) => tokenSummary(token)),
  })
}

async function logoutAction(agentCard: string | undefined, format: OutputFormat, all: boolean): Promise<void> {
  const path = tokenFilePath()
  const stored = readTokens(path).length
  const cardUrl = all ? undefined : (await cardUrlOf(agentCard, process.cwd())).href
  // Read again holding the lock: another command may be renewing or storing a token meanwhile.
  const removed =
    stored === 0
      ? 0
      : await withTokenLock(path, async () => {
          const tokens = readTokens(path)
          const kept = cardUrl === undefined ? [] : tokens.filter((token) => token.cardUrl !== cardUrl)
          if (kept.length < tokens.length) writeTokens(path, kept)
          return tokens.length - kept.length
        })
  print(format, [`Agent card: ${cardUrl ?? '(all)'}`, `Removed: ${removed}`], {
    agentCard: cardUrl ?? null,
    removed,
  })
}
