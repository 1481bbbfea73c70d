import { parseArgs } from 'node:util'

/** `a2a start`'s options as commander hands them to the command (each long name in camelCase). */
export interface StartFlags {
  port?: string
  host?: string
  publicUrl?: string
  logLevel?: string
  logFormat?: string
  requestLog?: string
}

interface StartOption {
  /** The long name (`--public-url`). */
  long: string
  /** The key the command reads it under: the long name in camelCase, as commander makes it. */
  key: keyof StartFlags
  short?: string
  /** The name of its value in the help (`<port>`). */
  value: string
  description: string
}

/**
 * The one list of `a2a start`'s options: commander registers them (`--help`, usage errors) and the start without
 * commander reads them, so the two cannot drift apart.
 */
export const START_OPTIONS: readonly StartOption[] = [
  { long: 'port', key: 'port', short: 'p', value: 'port', description: 'port to listen on (default: PORT, else 3000)' },
  {
    long: 'host',
    key: 'host',
    short: 'H',
    value: 'host',
    description: 'interface to listen on (default: HOST, else 127.0.0.1)',
  },
  {
    long: 'public-url',
    key: 'publicUrl',
    value: 'url',
    description: "the card's url behind a proxy (default: A2A_PUBLIC_URL)",
  },
  {
    long: 'log-level',
    key: 'logLevel',
    value: 'level',
    description: 'debug, info, warn, error or silent (default: A2A_LOG_LEVEL, else info)',
  },
  {
    long: 'log-format',
    key: 'logFormat',
    value: 'format',
    description: 'text, or json: one object per line (default: A2A_LOG_FORMAT, else text)',
  },
  {
    long: 'request-log',
    key: 'requestLog',
    value: 'level',
    description: 'the level of the one line logged per request (default: A2A_REQUEST_LOG, else debug)',
  },
]

/** An option as commander declares it: `-p, --port <port>`. */
export const commanderFlags = (option: StartOption): string =>
  `${option.short ? `-${option.short}, ` : ''}--${option.long} <${option.value}>`

const PARSE_OPTIONS = Object.fromEntries(
  START_OPTIONS.map((option) => [
    option.long,
    { type: 'string' as const, ...(option.short !== undefined && { short: option.short }) },
  ]),
)

const parseStart = (args: readonly string[]) =>
  parseArgs({ args: [...args], options: PARSE_OPTIONS, allowPositionals: true, strict: true, tokens: true })

/**
 * The entry and options of `a2a start <args>` when they are plain: only the options above, each with its value, and
 * at most one entry. Anything else (`--help`, an unknown option, a missing value, a value starting with `-`, `--`, a
 * short option with its value attached) answers undefined: commander reads those, to say what it always said.
 */
export function plainStartArgs(args: readonly string[]): { entry: string | undefined; flags: StartFlags } | undefined {
  let parsed: ReturnType<typeof parseStart>
  try {
    parsed = parseStart(args)
  } catch {
    return undefined
  }
  if (parsed.positionals.length > 1) return undefined
  for (const token of parsed.tokens) {
    if (token.kind === 'option-terminator') return undefined
    if (token.kind !== 'option') continue
    if (token.value === undefined) return undefined
    if (token.inlineValue ? !token.rawName.startsWith('--') : token.value.startsWith('-')) return undefined
  }
  const flags: StartFlags = {}
  for (const option of START_OPTIONS) {
    const value = parsed.values[option.long]
    if (typeof value === 'string') flags[option.key] = value
  }
  return { entry: parsed.positionals[0], flags }
}
