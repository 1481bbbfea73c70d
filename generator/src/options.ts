import { basename, resolve } from 'node:path'
import { UsageError } from './errors.js'
import { assertSkillId, packageNameFromDir, packageNameProblem, toDisplayName, toPackageName } from './names.js'

export const TEMPLATES = ['echo', 'streaming', 'multi-turn', 'ai-sdk', 'mastra', 'langgraph', 'team'] as const
export type TemplateName = (typeof TEMPLATES)[number]

export const AUTH_MODES = ['none', 'bearer', 'apikey', 'oidc'] as const
type AuthMode = (typeof AUTH_MODES)[number]

/**
 * Where the project runs: Node (`a2a start`), Bun's or Deno's native server (`serveAgent`), or a Cloudflare Worker
 * (`agentWorker`).
 */
export const RUNTIMES = ['node', 'bun', 'deno', 'workers'] as const
export type RuntimeName = (typeof RUNTIMES)[number]
export const RUNTIME_NAMES: Record<RuntimeName, string> = {
  node: 'Node.js',
  bun: 'Bun',
  deno: 'Deno',
  workers: 'Cloudflare Workers',
}

/**
 * Where the project is deployed: `docker` is the Dockerfile; the others are platforms that run its image, each with
 * its own files (AWS Bedrock AgentCore, Google Cloud Run, Kubernetes, Fly.io), so each brings the Dockerfile along.
 */
export const DEPLOY_TARGETS = ['docker', 'agentcore', 'cloudrun', 'k8s', 'fly'] as const
export type DeployTarget = (typeof DEPLOY_TARGETS)[number]
export const DEPLOY_TARGET_NAMES: Record<DeployTarget, string> = {
  docker: 'Docker',
  agentcore: 'AWS Bedrock AgentCore',
  cloudrun: 'Google Cloud Run',
  k8s: 'Kubernetes',
  fly: 'Fly.io',
}

export const PACKAGE_MANAGERS = ['npm', 'pnpm', 'yarn', 'bun'] as const
export type PackageManager = (typeof PACKAGE_MANAGERS)[number]

export interface Skill {
  id: string
  name: string
  description: string
  tags: string[]
  examples: string[]
}

/** Answers as they arrive from flags and prompts, before validation. */
export interface Answers {
  dir?: string
  /** Made from the directory's name unless given. */
  packageName?: string
  name?: string
  description?: string
  skills?: Skill[]
  streaming?: boolean
  pushNotifications?: boolean
  /** Export traces, metrics and logs over OTLP when the OTEL_* variables are set (Node projects). */
  telemetry?: boolean
  auth?: string
  /** With `oidc`: the issuer whose JWTs the agent accepts, and the audience they must name (else set in .env later). */
  oidcIssuer?: string
  oidcAudience?: string
  template?: string
  runtime?: string
  /** Deploy targets as typed: each entry one or several, comma-separated (`--deploy k8s,fly`); `none` for none. */
  deploy?: string[]
  pm?: string
  install?: boolean
  git?: boolean
  force?: boolean
  json?: boolean
  yes?: boolean
}

/** Everything the generator needs, validated. */
export interface ProjectOptions {
  /** Absolute target directory. */
  dir: string
  /** As the user typed it (for messages and `cd`). */
  dirArgument: string
  packageName: string
  name: string
  description: string
  skills: Skill[]
  streaming: boolean
  /** The card declares push notifications: clients may give a webhook for a task's updates. */
  pushNotifications: boolean
  /** src/telemetry.ts starts OpenTelemetry's Node SDK (OTLP over HTTP) when an OTEL_* endpoint is set. */
  telemetry: boolean
  auth: AuthMode
  /** With `oidc`, written into .env; undefined leaves .env a commented placeholder to fill in. */
  oidcIssuer: string | undefined
  oidcAudience: string | undefined
  template: TemplateName
  runtime: RuntimeName
  /** In DEPLOY_TARGETS' order; `docker` whenever another target is (they run its image). */
  deploy: DeployTarget[]
  pm: PackageManager
  install: boolean
  git: boolean
  force: boolean
  json: boolean
}

export const DEFAULT_DIR = 'my-agent'
export const DEFAULT_DESCRIPTION = 'An A2A agent built with create-a2a-agent'

/** The skill of the templates that call a model, whatever their framework. */
const CHAT_SKILL: Skill = {
  id: 'chat',
  name: 'Chat',
  description: 'Answers with a language model',
  tags: ['llm', 'chat'],
  examples: ['Explain the A2A protocol in one sentence'],
}

/** What each template's one skill is when the user declares none. */
export const DEFAULT_SKILLS: Record<TemplateName, Skill> = {
  echo: {
    id: 'echo',
    name: 'Echo',
    description: 'Repeats your message back',
    tags: ['echo'],
    examples: ['Hello there!'],
  },
  streaming: {
    id: 'stream',
    name: 'Stream',
    description: 'Streams its answer word by word',
    tags: ['streaming'],
    examples: ['Tell me a short story'],
  },
  'multi-turn': {
    id: 'plan-trip',
    name: 'Plan a trip',
    description: 'Asks where you want to go, then plans it',
    tags: ['travel'],
    examples: ['Plan a weekend trip'],
  },
  'ai-sdk': CHAT_SKILL,
  mastra: CHAT_SKILL,
  langgraph: CHAT_SKILL,
  // The planner's: the writer agent of the team has its own skill, `write`.
  team: {
    id: 'plan',
    name: 'Plan',
    description: 'Briefs the writer agent over A2A and streams its draft back',
    tags: ['team', 'planning'],
    examples: ['A short note on the A2A protocol'],
  },
}

/**
 * The rules for what a person types: each gives the problem, or undefined when the answer is fine. The same
 * rule refuses a flag in `resolveOptions` and an answer in its prompt, where it can be typed again.
 */
export const ANSWER_RULES = {
  dir: (value: string) => (value.trim() ? undefined : 'must not be empty'),
  name: (value: string) => (value.trim() ? undefined : 'must not be empty'),
  description: (value: string) => (value.trim() ? undefined : 'must not be empty'),
  packageName: (value: string) => packageNameProblem(value.trim()),
  oidcIssuer: (value: string) => oidcIssuerProblem(value.trim()),
  oidcAudience: (value: string) => oidcAudienceProblem(value.trim()),
} satisfies Record<string, (value: string) => string | undefined>

/**
 * Characters .env cannot hold unquoted the same way in every reader (Node, Bun, Deno, wrangler's dotenv, which
 * also expands `$`): an issuer or audience never needs them, so they are refused rather than quoted.
 */
const NOT_IN_DOTENV = /[\s"'`$\\#]/

/**
 * The issuer, as the runtime accepts it (A2A_OIDC_ISSUER): an absolute `https:` URL, or `http:` on this machine
 * only (local development), without a query or fragment. Its keys come from there: over plain http from elsewhere
 * they could be swapped on the way.
 */
function oidcIssuerProblem(value: string): string | undefined {
  const url = URL.canParse(value) ? new URL(value) : undefined
  const loopback = (host: string) => host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host)
  if (!(url?.protocol === 'https:' || (url?.protocol === 'http:' && loopback(url.hostname))))
    return 'must be an absolute https: URL (http: only on localhost or 127.0.0.1), e.g. https://login.example.com/'
  if (NOT_IN_DOTENV.test(value) || /[?]/.test(value)) return 'must be a URL without a query, spaces, quotes, $ or #'
  return undefined
}

/** The audience tokens must name (`aud`): comma-separated for several, as A2A_OIDC_AUDIENCE reads it. */
function oidcAudienceProblem(value: string): string | undefined {
  if (!value) return 'must not be empty'
  if (NOT_IN_DOTENV.test(value)) return 'must have no spaces, quotes, $ or #'
  if (value.split(',').some((entry) => !entry.trim())) return 'must not have an empty entry between commas'
  return undefined
}

/**
 * The card's name a directory suggests: "weather-bot" → "Weather Bot"; a name no package name can be made of stays as
 * it is.
 */
export function defaultDisplayName(dir: string): string {
  const dirName = basename(dir)
  const converted = toPackageName(dirName)
  return converted ? toDisplayName(converted) : dirName.trim() || 'My Agent'
}

/** The answers still needed when nobody can be asked. */
export function missingAnswers(answers: Answers): string[] {
  const missing: string[] = []
  if (answers.dir === undefined) missing.push('[dir]')
  if (answers.name === undefined) missing.push('--name')
  if (answers.description === undefined) missing.push('--description')
  return missing
}

/** The package manager that ran us (`npm create`, `pnpm create`…), else npm. */
export function detectPackageManager(userAgent = process.env.npm_config_user_agent): PackageManager {
  const name = userAgent?.split('/', 1)[0]
  return PACKAGE_MANAGERS.find((pm) => pm === name) ?? 'npm'
}

function oneOf<T extends string>(value: string, allowed: readonly T[], flag: string, more = ''): T {
  if ((allowed as readonly string[]).includes(value)) return value as T
  throw new UsageError(`${flag} must be one of ${allowed.join(', ')}${more} (got ${JSON.stringify(value)})`)
}

/** Fills defaults and validates; every problem is a UsageError naming the flag. */
export function resolveOptions(answers: Answers, cwd: string): ProjectOptions {
  const dirArgument = (answers.dir ?? DEFAULT_DIR).trim()
  const dirProblem = ANSWER_RULES.dir(dirArgument)
  if (dirProblem) throw new UsageError(`[dir] ${dirProblem}`)
  const dir = resolve(cwd, dirArgument)
  const packageName = resolvePackageName(answers.packageName, basename(dir))

  const name = (answers.name ?? defaultDisplayName(dir)).trim()
  const nameProblem = ANSWER_RULES.name(name)
  if (nameProblem) throw new UsageError(`--name ${nameProblem}`)
  const description = (answers.description ?? DEFAULT_DESCRIPTION).trim()
  const descriptionProblem = ANSWER_RULES.description(description)
  if (descriptionProblem) throw new UsageError(`--description ${descriptionProblem}`)

  const template = oneOf(answers.template ?? 'echo', TEMPLATES, '--template')
  const skills = answers.skills?.length ? answers.skills : [DEFAULT_SKILLS[template]]
  const seen = new Set<string>()
  for (const skill of skills) {
    assertSkillId(skill.id)
    if (seen.has(skill.id))
      throw new UsageError(`--skill: the id ${JSON.stringify(skill.id)} is used twice; skill ids must be unique`)
    seen.add(skill.id)
    if (!skill.name.trim()) throw new UsageError(`--skill ${skill.id}: the name must not be empty`)
    if (!skill.description.trim()) throw new UsageError(`--skill ${skill.id}: the description must not be empty`)
  }

  const auth = oneOf((answers.auth ?? 'none').toLowerCase(), AUTH_MODES, '--auth')
  const oidc = resolveOidc(answers, auth)
  const runtime = oneOf(answers.runtime ?? 'node', RUNTIMES, '--runtime')
  const telemetry = answers.telemetry ?? false
  if (telemetry && runtime !== 'node') throw new UsageError(telemetryRuntimeProblem(runtime))
  const deploy = resolveDeploy(answers.deploy, runtime)
  if (template === 'team') {
    const problem = teamProblem(runtime, auth, deploy)
    if (problem) throw new UsageError(problem)
  }

  return {
    dir,
    dirArgument,
    packageName,
    name,
    description,
    skills,
    streaming: answers.streaming ?? true,
    pushNotifications: answers.pushNotifications ?? false,
    telemetry,
    auth,
    ...oidc,
    template,
    runtime,
    deploy,
    pm: oneOf(answers.pm ?? detectPackageManager(), PACKAGE_MANAGERS, '--pm'),
    install: answers.install ?? true,
    git: answers.git ?? true,
    force: answers.force ?? false,
    json: answers.json ?? false,
  }
}

/**
 * Why --telemetry stops at Node for now: the project starts OpenTelemetry's Node SDK, whose context follows the
 * agent's awaits through Node's async hooks; Bun, Deno and Workers would each need their own setup.
 */
function telemetryRuntimeProblem(runtime: RuntimeName): string {
  return `--telemetry is for Node.js projects for now (got --runtime ${runtime}): it starts OpenTelemetry's Node SDK`
}

/**
 * The deploy targets of `--deploy` (repeated, or comma-separated): none given means the Dockerfile of a Node project,
 * as before there was a choice. Every target runs the project's container image, which only the Node project has: a
 * Worker deploys with wrangler, and a Bun or Deno project has no Dockerfile, so there `--deploy` takes `none` only.
 */
export function resolveDeploy(given: string[] | undefined, runtime: RuntimeName): DeployTarget[] {
  if (given === undefined) return runtime === 'node' ? ['docker'] : []
  const words = given.flatMap((entry) => entry.split(',')).map((word) => word.trim().toLowerCase())
  if (words.some((word) => !word))
    throw new UsageError(`--deploy must not have an empty entry (got ${JSON.stringify(given.join(','))})`)
  if (words.includes('none')) {
    if (words.length > 1) throw new UsageError(`--deploy none cannot go with a target (got ${words.join(',')})`)
    return []
  }
  const chosen = new Set(words.map((word) => oneOf(word, DEPLOY_TARGETS, '--deploy', ' or none')))
  if (runtime !== 'node') throw new UsageError(deployRuntimeProblem([...chosen][0]!, runtime))
  // Every platform target runs the image the Dockerfile builds.
  chosen.add('docker')
  return DEPLOY_TARGETS.filter((target) => chosen.has(target))
}

function deployRuntimeProblem(target: DeployTarget, runtime: RuntimeName): string {
  if (runtime === 'workers')
    return (
      `--deploy ${target} is a container target, and --runtime workers deploys with wrangler (its deploy script) ` +
      'instead: leave --deploy out'
    )
  return (
    `--deploy ${target} runs the project's container image, which only --runtime node has a Dockerfile for ` +
    `(got --runtime ${runtime}): leave --deploy out`
  )
}

/**
 * What the team template (a planner calling a writer over A2A, both served by one server) cannot be made with: a
 * Worker serves one agent, the planner has no token of an OpenID Connect issuer to call the writer with, and
 * AgentCore's contract is one agent at `POST /`.
 */
function teamProblem(runtime: RuntimeName, auth: AuthMode, deploy: readonly DeployTarget[]): string | undefined {
  if (runtime === 'workers')
    return '--template team serves two agents from one server, and --runtime workers serves one: use node, bun or deno'
  if (auth === 'oidc')
    return (
      '--template team --auth oidc: the planner has no token of your issuer to call the writer with; ' +
      'use --auth bearer or apikey (one credential for both agents)'
    )
  if (deploy.includes('agentcore'))
    return (
      '--deploy agentcore serves one agent at POST / (its A2A contract), and --template team serves two ' +
      '(/planner, /writer): choose another target'
    )
  return undefined
}

/** The issuer and audience of `--auth oidc`, checked; refused with another mode, where nothing would read them. */
function resolveOidc(answers: Answers, auth: AuthMode): Pick<ProjectOptions, 'oidcIssuer' | 'oidcAudience'> {
  const given = { '--oidc-issuer': answers.oidcIssuer, '--oidc-audience': answers.oidcAudience }
  for (const [flag, value] of Object.entries(given)) {
    if (value !== undefined && auth !== 'oidc') throw new UsageError(`${flag} is for --auth oidc (got --auth ${auth})`)
  }
  const issuer = answers.oidcIssuer?.trim()
  const issuerProblem = issuer === undefined ? undefined : ANSWER_RULES.oidcIssuer(issuer)
  if (issuerProblem) throw new UsageError(`--oidc-issuer ${issuerProblem} (got ${JSON.stringify(answers.oidcIssuer)})`)
  const audience = answers.oidcAudience?.trim()
  const audienceProblem = audience === undefined ? undefined : ANSWER_RULES.oidcAudience(audience)
  if (audienceProblem)
    throw new UsageError(`--oidc-audience ${audienceProblem} (got ${JSON.stringify(answers.oidcAudience)})`)
  return { oidcIssuer: issuer, oidcAudience: audience }
}

/** `--package-name` when given, else the one the directory's name makes; says what to pass when npm would refuse it. */
function resolvePackageName(given: string | undefined, dirName: string): string {
  if (given !== undefined) {
    const problem = ANSWER_RULES.packageName(given)
    if (problem) throw new UsageError(`--package-name: ${problem}`)
    return given.trim()
  }
  const made = packageNameFromDir(dirName)
  if (made.problem)
    throw new UsageError(
      `${made.problem} (made from the directory name ${JSON.stringify(dirName)}); pass --package-name <name>`,
    )
  return made.name
}

/**
 * `--skill "id:Name:Description"` (the description may hold colons), or a JSON object with `id`, `name`,
 * `description`, `tags` and `examples` for the full form.
 */
export function parseSkill(value: string): Skill {
  const text = value.trim()
  if (text.startsWith('{')) {
    let raw: Partial<Record<keyof Skill, unknown>>
    try {
      raw = JSON.parse(text)
    } catch {
      throw new UsageError(`--skill: ${JSON.stringify(value)} is not valid JSON`)
    }
    const strings = (field: 'tags' | 'examples') => {
      const list = raw[field] ?? []
      if (!Array.isArray(list) || !list.every((item) => typeof item === 'string'))
        throw new UsageError(`--skill: "${field}" must be an array of strings`)
      return list as string[]
    }
    if (typeof raw.id !== 'string') throw new UsageError('--skill: "id" must be a string')
    for (const field of ['name', 'description'] as const) {
      if (raw[field] !== undefined && typeof raw[field] !== 'string')
        throw new UsageError(`--skill: "${field}" must be a string`)
    }
    const name = (raw.name as string | undefined) ?? toDisplayName(raw.id)
    // A skill needs a description (its card is refused without one): the name stands in for a blank one.
    const description = (raw.description as string | undefined)?.trim() ? (raw.description as string) : name
    return {
      id: raw.id,
      name,
      description,
      tags: raw.tags === undefined ? [raw.id] : strings('tags'),
      examples: strings('examples'),
    }
  }
  const [id = '', name, ...rest] = text.split(':')
  const description = rest.join(':').trim()
  return {
    id: id.trim(),
    name: name?.trim() || toDisplayName(id.trim()),
    description: description || name?.trim() || toDisplayName(id.trim()),
    tags: [id.trim()],
    examples: [],
  }
}
