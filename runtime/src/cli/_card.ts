import { existsSync } from 'node:fs'
import type { Command } from 'commander'
import { isObject } from '../_is-object.js'
import { cardAt, normalizeCard } from '../core/_card.js'
import { ConfigurationError } from '../errors.js'
import { envValue } from '../settings.js'
import { checkCard, type Finding } from './_card-check.js'
import {
  checkSignatures,
  type KeySet,
  readKeySet,
  type SignatureReport,
  signatureFindings,
  signatureLines,
} from './_card-signatures.js'
import { type CardText, readCardFile, readCardResponse } from './_card-source.js'
import { agentBase, clientHeaders, unreachable } from './_client.js'
import { loadDotEnv } from './_env.js'
import { ProjectError } from './_errors.js'
import { probeInterfaces } from './_interface-probes.js'
import { probeLive } from './_live-probe.js'
import { DEFAULT_ENTRY, loadAgent } from './_load-agent.js'
import { chooseAgent } from './_local-agent.js'
import { registerCardGet } from './commands/card-get.js'

interface ValidateFlags {
  json?: boolean
  entry?: string
  live?: boolean
  token?: string
  apiKey?: string
  jwks?: string
}

const CARD_PATHS = ['.well-known/agent.json', '.well-known/agent-card.json']
/** A URL path that already names a card (as `a2a dev` prints it), with or without a trailing slash. */
const CARD_PATH = /\/\.well-known\/agent(-card)?\.json\/?$/

/** The URL as given when it names a card path itself (`…/.well-known/agent.json`, `…/agent-card.json?v=1`). */
function namedCard(source: string): URL | undefined {
  const url = URL.canParse(source) ? new URL(source) : undefined
  return url && /^https?:$/.test(url.protocol) && CARD_PATH.test(url.pathname) ? url : undefined
}

/** The agent a URL is about: a card URL stands for the agent at the folder that holds `.well-known/`. */
function agentOf(source: string): string {
  const card = namedCard(source)
  return card ? new URL(card.pathname.replace(CARD_PATH, '/'), card.origin).href : source
}
const AGENT_MODULE = /\.[cm]?[jt]sx?$/i

export function registerCard(program: Command): void {
  const card = program.command('card').description('Work with Agent Cards')
  registerCardGet(card)
  card
    .command('validate')
    .description("Check a card: the project's (no argument), a JSON file, or a running agent's URL")
    .argument('[source]', 'a card file, the URL of a running agent, or an agent module (as --entry)')
    .option('--entry <module>', "the project's agent module", DEFAULT_ENTRY)
    .option('--json', 'print the findings as JSON')
    .option(
      '--live',
      "probe the running agent too (send, stream, authentication): at the URL given, else this project's a2a dev",
    )
    .option('--token <token>', 'bearer token for --live (default: A2A_BEARER_TOKEN)')
    .option('--api-key <key>', 'API key for --live (default: A2A_API_KEY)')
    .option(
      '--jwks <file-or-url>',
      "verify the card's signatures with these public keys (a JWKS file or URL), never with keys the card names",
    )
    .action(async (source: string | undefined, flags: ValidateFlags) => {
      if (flags.jwks !== undefined && (source === undefined || AGENT_MODULE.test(source)) && !flags.live)
        throw new ProjectError("--jwks verifies a served card's signatures: give the card file or the agent's URL")
      const keySet = flags.jwks === undefined ? undefined : await readKeySet(flags.jwks)
      const checked = flags.live
        ? await liveFindings(source, flags)
        : await findingsFor(source, flags.entry ?? DEFAULT_ENTRY)
      const signed = await signedCards(checked, keySet)
      const findings = [...checked.findings, ...signed.flatMap((card) => card.findings)]
      report(checked.label, findings, flags.json === true, signed, keySet)
      process.exitCode = findings.some((finding) => finding.level === 'error') ? 1 : 0
    })
}

/** The running agent's card and the probes: at the URL given, else this project's running `a2a dev`. */
async function liveFindings(source: string | undefined, flags: ValidateFlags): Promise<Checked> {
  if (source !== undefined && !/^https?:\/\//i.test(source)) {
    throw new ProjectError("--live probes a running agent: give its URL, or no argument for this project's a2a dev")
  }
  const { base, via } = await chooseAgent(process.cwd(), source === undefined ? undefined : agentOf(source))
  if (via) process.stderr.write(`→ ${base.href} (${via})\n`)
  const checked = await fetchFindings(source !== undefined && namedCard(source) ? source : base.href)
  const probing = { headers: clientHeaders(base, flags), timeoutMs: 10_000 }
  const platform = checked.card ? await probeLive(base, checked.card, probing) : undefined
  if (platform) checked.findings.push(...platform.findings)
  // A probe that stopped at the door (credentials, a redirect) said why once: the interfaces would say it again.
  if (platform?.stopped) return checked
  // Every interface the A2A v1.0 card declares, each in its own binding (an agent without one has nothing more).
  const v1 = await fetchCard(checked.a2aCardUrl ?? new URL(A2A_CARD_PATH, base).href, V1_CARD_HEADERS)
  if ('card' in v1 && isObject(v1.card)) checked.findings.push(...(await probeInterfaces(v1.card, base, probing)))
  return checked
}

const A2A_CARD_PATH = '.well-known/agent-card.json'
const V1_CARD_HEADERS = { 'a2a-version': '1.0' }

interface Checked {
  label: string
  findings: Finding[]
  /** The card read, when it was a JSON object (for --live and --jwks). */
  card?: Record<string, unknown>
  /** The agent-card.json to read both A2A shapes of, for --jwks: the URL named that card or the agent. */
  a2aCardUrl?: string
}

/** A card whose signatures were checked: which one, the outcome, and the findings it adds. */
interface SignedCard {
  /** Which card, when several were checked (`the A2A v1.0 card`). */
  which?: string
  report: SignatureReport
  findings: Finding[]
}

/**
 * The cards whose signatures the report covers: with --jwks, both A2A shapes of a running agent's card (its
 * agent.json, the platform's, has no signatures) or the card file; without, the card read when it is signed.
 */
async function signedCards(checked: Checked, keySet: KeySet | undefined): Promise<SignedCard[]> {
  const checkedCard = async (card: unknown, which?: string): Promise<SignedCard> => {
    const report = await checkSignatures(card, keySet)
    const findings = signatureFindings(report, keySet).map((finding) =>
      which ? { ...finding, message: `${which}: ${finding.message}` } : finding,
    )
    return { ...(which && { which }), report, findings }
  }
  if (keySet && checked.a2aCardUrl) {
    const cards: SignedCard[] = []
    for (const [which, headers] of A2A_SHAPES) {
      const read = await fetchCard(checked.a2aCardUrl, headers)
      cards.push(
        'card' in read
          ? await checkedCard(read.card, which)
          : { which, report: { outcome: 'unsigned', signatures: [] }, findings: [read.finding] },
      )
    }
    return cards
  }
  if (checked.card && (keySet || checked.card.signatures !== undefined)) return [await checkedCard(checked.card)]
  return []
}

const A2A_SHAPES: ReadonlyArray<readonly [string, Record<string, string>]> = [
  ['the A2A v1.0 card', { 'a2a-version': '1.0' }],
  ['the A2A v0.3 card', {}],
]

async function fetchCard(url: string, headers: Record<string, string>): Promise<CardText> {
  let response: Response
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) })
  } catch (error) {
    throw unreachable(url, error, 'is the agent running? wrong port?')
  }
  if (response.ok) return readCardResponse(response)
  await response.body?.cancel()
  const hint = 'an A2A agent serves its card there; without one there are no signatures to verify'
  return { finding: { level: 'warning', path: '$', message: `${url} answered HTTP ${response.status}`, hint } }
}

async function findingsFor(source: string | undefined, entry: string): Promise<Checked> {
  if (source === undefined) return { label: `${entry} (as served)`, findings: await projectFindings(entry) }
  if (/^https?:\/\//i.test(source)) return fetchFindings(source)
  // `a2a card validate src/agent.ts` means the card that module serves, not a JSON file.
  if (AGENT_MODULE.test(source)) return { label: `${source} (as served)`, findings: await projectFindings(source) }
  if (!existsSync(source))
    throw new ProjectError(`No card file at ${source} (pass a JSON file, or a URL starting with http:// or https://)`)
  const read = readCardFile(source)
  return {
    label: source,
    findings: findingsOf(read),
    ...('card' in read && isObject(read.card) && { card: read.card }),
  }
}

const findingsOf = (read: CardText): Finding[] => ('finding' in read ? [read.finding] : checkCard(read.card))

/** The project's card exactly as the runtime would serve it on PORT. */
async function projectFindings(entry: string): Promise<Finding[]> {
  const cwd = process.cwd()
  loadDotEnv(cwd)
  const { agent } = await loadAgent(cwd, entry, 'pass --entry <module>')
  const url = envValue(process.env, 'A2A_PUBLIC_URL') ?? `http://localhost:${envValue(process.env, 'PORT') ?? 3000}/`
  try {
    return checkCard(cardAt(normalizeCard(agent.card), url))
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error
    const field = /`([^`]+)`/.exec(error.message)?.[1] ?? '$'
    return [
      {
        level: 'error',
        path: field,
        message: error.message.replace(/^Agent card: /, ''),
        hint: 'the runtime refuses to start with this card',
      },
    ]
  }
}

/**
 * A running agent's card: at the URL given when it names a card path, else from the path the platform reads
 * and then the A2A v1.0 one.
 */
async function fetchFindings(source: string): Promise<Checked> {
  const named = namedCard(source)
  const base = agentBase(source)
  // The A2A card beside the one named (the platform's agent.json has no signatures), or the one named.
  const a2aCardUrl =
    named === undefined
      ? new URL('.well-known/agent-card.json', base).href
      : /agent-card\.json\/?$/.test(named.pathname)
        ? named.href
        : new URL(named.pathname.replace(CARD_PATH, '/.well-known/agent-card.json'), named.origin).href
  const failures: string[] = []
  for (const url of named ? [named.href] : CARD_PATHS.map((path) => new URL(path, base).href)) {
    let response: Response
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(10_000) })
    } catch (error) {
      throw unreachable(url, error, 'is the agent running? wrong port?')
    }
    if (!response.ok) {
      failures.push(`${url} answered HTTP ${response.status}`)
      continue
    }
    const read = await readCardResponse(response)
    if ('finding' in read) return { label: url, findings: [read.finding], ...(a2aCardUrl && { a2aCardUrl }) }
    return {
      label: url,
      findings: checkCard(read.card),
      ...(isObject(read.card) && { card: read.card }),
      ...(a2aCardUrl && { a2aCardUrl }),
    }
  }
  const hint = named
    ? 'check the card URL, or give the agent URL to try both well-known paths'
    : 'serve the card at .well-known/agent.json'
  return {
    label: named?.href ?? base.href,
    findings: [{ level: 'error', path: '$', message: `no card: ${failures.join('; ')}`, hint }],
  }
}

function report(label: string, findings: Finding[], json: boolean, signed: SignedCard[], keySet?: KeySet): void {
  if (json) {
    const signatures = signed.map(({ which, report }) => ({ ...(which && { card: which }), ...report }))
    process.stdout.write(`${JSON.stringify({ source: label, findings, ...(signed.length && { signatures }) })}\n`)
    return
  }
  for (const { which, report } of signed) {
    for (const line of signatureLines(report, keySet)) process.stdout.write(`${which ? `${which}: ` : ''}${line}\n`)
  }
  for (const finding of findings) {
    process.stdout.write(
      `${finding.level === 'error' ? 'error  ' : 'warning'} ${finding.path}: ${finding.message} → ${finding.hint}\n`,
    )
  }
  const errors = findings.filter((finding) => finding.level === 'error').length
  const warnings = findings.length - errors
  const outcomes = signed.map(
    ({ which, report }) => `${which ? `${which.replace(/^the /, '')} ` : ''}${report.outcome}`,
  )
  const signatures = outcomes.length ? `; signature${outcomes.length > 1 ? 's' : ''} ${outcomes.join(', ')}` : ''
  process.stdout.write(
    `${label}: ${errors ? `${errors} error(s)` : 'valid'}${warnings ? `, ${warnings} warning(s)` : ''}${signatures}\n`,
  )
}
