import type { Command } from 'commander'
import { configuredValue } from '../config/_resolve.js'
import { printableLine } from '../output/_sanitize.js'
import { cardUrlOf } from './_agent-card.js'
import { AuthError } from './_auth-error.js'
import { type OutputFormat, print, reportFailure, summaryLines, tokenSummary } from './_auth-output.js'
import type { Flow } from './_authorization-server.js'
import { login } from './_login.js'
import { readTokens, tokenFilePath, writeTokens } from './_token-file.js'
import { withTokenLock } from './_token-lock.js'

interface CommonFlags {
  output?: string
}

interface LoginFlags extends CommonFlags {
  agentCard?: string
  flow?: string
  clientId?: string
  clientSecret?: string
  scope?: string[]
  issuer?: string
}

interface LogoutFlags extends CommonFlags {
  agentCard?: string
  all?: boolean
}

const FLOWS: readonly Flow[] = ['device', 'client-credentials']

/** `a2a auth login|status|logout`: OAuth 2.x tokens for agents, kept in the user's configuration folder. */
export function registerAuth(program: Command): void {
  const auth = program
    .command('auth')
    .description('Log in to agents with OAuth 2.x (device code, client credentials) and manage the stored tokens')
  auth
    .command('login')
    .description(
      "Get an OAuth token for an agent from the authorization server its card names, and store it for the agent's " +
        'later calls',
    )
    .option('--agent-card <ref>', "the agent: its card's URL, its origin or host, or a card file (A2ACLI_AGENT_CARD)")
    .option('--flow <flow>', 'device or client-credentials (A2ACLI_FLOW; default: device where offered)')
    .option('--client-id <id>', "this CLI's client id at the authorization server (A2ACLI_CLIENT_ID)")
    .option(
      '--client-secret <secret>',
      'the client secret, for client-credentials (prefer A2ACLI_CLIENT_SECRET: other users of this machine can ' +
        'read a command line in the process list, and it stays in the shell history)',
    )
    .option('--scope <scope...>', 'scopes to ask for (A2ACLI_SCOPE; default: what the card requires)')
    .option('--issuer <url>', "the authorization server, over the card's (A2ACLI_ISSUER)")
    .option('-o, --output <format>', 'text or json (A2ACLI_OUTPUT; default text)')
    .addHelpText(
      'after',
      '\nThe device flow prints a verification URL and a user code on stderr and waits for the approval; it never ' +
        'reads input.\nTokens are kept in $XDG_CONFIG_HOME/a2a-cli/tokens.json (else ~/.config/a2a-cli/), readable ' +
        'by you alone.',
    )
    .action((flags: LoginFlags) => run(flags, () => loginAction(flags)))
  auth
    .command('status')
    .description('List the agents with a stored token: issuer, flow, scope and expiry (never the token)')
    .option('-o, --output <format>', 'text or json (A2ACLI_OUTPUT; default text)')
    .action((flags: CommonFlags) => run(flags, () => statusAction(flags)))
  auth
    .command('logout')
    .description("Remove the stored tokens of an agent (by default this project's agent)")
    .option('--agent-card <ref>', "the agent: its card's URL, its origin or host, or a card file (A2ACLI_AGENT_CARD)")
    .option('--all', "remove every agent's tokens")
    .option('-o, --output <format>', 'text or json (A2ACLI_OUTPUT; default text)')
    .action((flags: LogoutFlags) => run(flags, () => logoutAction(flags)))
}

const env = (name: string) => configuredValue(name)?.trim() || undefined

function outputFormat(flags: CommonFlags): OutputFormat {
  const format = flags.output ?? env('A2ACLI_OUTPUT') ?? 'text'
  if (format !== 'text' && format !== 'json')
    throw new AuthError('A2ACLI_ERR_USAGE', `--output must be text or json (got ${JSON.stringify(format)})`)
  return format
}

/** Runs an action; a failure becomes the error envelope and its exit status, never a stack. */
async function run(flags: CommonFlags, action: (format: OutputFormat) => Promise<void>): Promise<void> {
  let format: OutputFormat = 'text'
  try {
    format = outputFormat(flags)
    await action(format)
  } catch (error) {
    reportFailure(format === 'json' || flags.output === 'json' ? 'json' : 'text', error)
  }
}

async function loginAction(flags: LoginFlags): Promise<void> {
  const format = outputFormat(flags)
  const flow = flags.flow ?? env('A2ACLI_FLOW')
  if (flow !== undefined && !FLOWS.includes(flow as Flow))
    throw new AuthError('A2ACLI_ERR_USAGE', `--flow must be device or client-credentials (got ${JSON.stringify(flow)})`)
  const scope = flags.scope ?? (env('A2ACLI_SCOPE') ? [env('A2ACLI_SCOPE')!] : undefined)
  const { token, path } = await login(
    {
      agentCard: flags.agentCard,
      flow: flow as Flow | undefined,
      clientId: flags.clientId ?? env('A2ACLI_CLIENT_ID'),
      clientSecret: flags.clientSecret ?? env('A2ACLI_CLIENT_SECRET'),
      scope,
      issuer: flags.issuer ?? env('A2ACLI_ISSUER'),
    },
    (line) => process.stderr.write(`${printableLine(line)}\n`),
  )
  print(format, [...summaryLines(token), `Token file: ${path}`], { ...tokenSummary(token), tokenFile: path })
}

async function statusAction(flags: CommonFlags): Promise<void> {
  const format = outputFormat(flags)
  const path = tokenFilePath()
  const tokens = readTokens(path)
  const blocks = tokens.map((token) => [...summaryLines(token), ''])
  print(format, [`Token file: ${path}`, `Tokens: ${tokens.length}`, '', ...blocks.flat()].slice(0, -1), {
    tokenFile: path,
    tokens: tokens.map((token) => tokenSummary(token)),
  })
}

async function logoutAction(flags: LogoutFlags): Promise<void> {
  const format = outputFormat(flags)
  if (flags.all && flags.agentCard !== undefined)
    throw new AuthError('A2ACLI_ERR_USAGE', '--all and --agent-card cannot go together', 'pass one of them')
  const path = tokenFilePath()
  const stored = readTokens(path).length
  const cardUrl = flags.all ? undefined : (await cardUrlOf(flags.agentCard, process.cwd())).href
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
