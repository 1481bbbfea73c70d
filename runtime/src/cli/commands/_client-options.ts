import { type Command, Option } from 'commander'
import { takesConfiguration } from '../config/_configurable.js'

/** A repeatable option's values in the order given. */
const collect = (value: string, previous: string[] = []): string[] => [...previous, value]

/**
 * The options every command that talks to an agent takes (the A2A CLI specification's global options). Each may
 * also be set by its `A2ACLI_<FLAG>` variable or an `.env` file (`a2a config show` lists them), except the
 * delivery (`--stream`), which only the command line chooses. The spellings of earlier versions of `a2a send`
 * (`--url`, `--token`, `--json`) still work, hidden from the help.
 */
export function withClientOptions<T extends Command>(command: T): T {
  return takesConfiguration(command)
    .option('-a, --agent-card <ref>', "the agent: a host, a card's URL or a card file (default: this project's agent)")
    .option('--agent <name>', "one agent of this project's server of several, at /<name>/ (default: its only one)")
    .option(
      '--transport <binding>',
      "a binding to prefer (JSONRPC, HTTP+JSON), repeatable, first wins (default: the card's order)",
      collect,
    )
    .option('--a2a-version <version>', 'the A2A version signalled on every request', '1.0')
    .option(
      '--bearer <token>',
      'a bearer token (a flag shows in the process list and stays in your shell history: prefer A2ACLI_BEARER)',
    )
    .option(
      '--api-key <key>',
      'an API key (a flag shows in the process list and stays in your shell history: prefer A2ACLI_API_KEY)',
    )
    .option('--svc-param <key:value>', 'a service parameter, sent as a request header; repeatable', collect)
    .option('--timeout <duration>', 'give up after this long, e.g. 30s or 5m (default: no limit)')
    .option('--insecure', 'skip TLS certificate checks (development only)', false)
    .option('--config <path>', 'read A2ACLI_* settings from this .env file instead of the nearest .env')
    .option(
      '--traceparent <value>',
      "a W3C trace context sent with every request, so the agent's spans join that trace (default: TRACEPARENT)",
    )
    .option('--debug', 'log every request and answer to stderr, credentials redacted', false)
    .option('--verbose', 'show every part with its media type and metadata', false)
    .addOption(new Option('-o, --output <format>', 'text or json').choices(['text', 'json']).default('text'))
    .addOption(new Option('--url <url>', 'the agent (earlier spelling of --agent-card)').hideHelp())
    .addOption(new Option('--token <token>', 'earlier spelling of --bearer').hideHelp())
    .addOption(new Option('--json', 'earlier spelling of -o json').hideHelp())
}
