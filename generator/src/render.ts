import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import Handlebars from 'handlebars'
import { DEPLOY_SIZING } from './_deploy-sizing.js'
import { projectCommand } from './_install.js'
import { nodeRequirement } from './_requirements.js'
import { dotenvValue, json, markdown, tsString } from './escape.js'
import { toAgentRuntimeName, toServiceName, toWorkerName } from './names.js'
import { DEPLOY_TARGETS, type ProjectOptions } from './options.js'

export interface RenderedFile {
  /** Relative to the project, with `/` separators. */
  path: string
  /** Text from the templates; bytes for the packed runtime. */
  content: string | Uint8Array
  /** Permission bits when the file must not be readable by others (`.env` holds the credential). */
  mode?: number
}

/** The templates that call a language model: they share the `llm/` layer (the stand-in model server of their tests). */
export const MODEL_TEMPLATES = new Set<ProjectOptions['template']>(['ai-sdk', 'mastra', 'langgraph'])

/**
 * The templates whose model is the AI SDK's (Mastra runs AI SDK models): they share the `ai-sdk-model/` layer
 * (`src/model.ts` and its test).
 */
const AI_SDK_MODEL_TEMPLATES = new Set<ProjectOptions['template']>(['ai-sdk', 'mastra'])

/** Files that hold a secret: only their owner may read them. */
const PRIVATE_FILES = new Set(['.env'])

/**
 * A string the user typed. Printing it bare in a template throws: it reaches a file only through an
 * escaping helper for that file's context (`json`, `ts`, `md`), so no template can forget to escape.
 */
class UserText {
  constructor(readonly value: string) {}
  toString(): never {
    throw new Error(
      'A template printed a user string without an escaping helper ({{ts x}}, {{json x}}, {{md x}} or {{env x}})',
    )
  }
}

/** Turns UserText back into strings, deeply, for helpers that serialise whole values. */
function plain(value: unknown): unknown {
  if (value instanceof UserText) return value.value
  if (Array.isArray(value)) return value.map(plain)
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]))
  return value
}

const text = (value: unknown): string => {
  const unwrapped = plain(value)
  if (typeof unwrapped !== 'string') throw new Error(`An escaping helper got ${typeof unwrapped}, not a string`)
  return unwrapped
}

function createHandlebars(): typeof Handlebars {
  const hbs = Handlebars.create()
  hbs.registerHelper('json', (value: unknown) => json(plain(value)))
  hbs.registerHelper('tsValue', (value: unknown) => tsValue(plain(value)))
  hbs.registerHelper('ts', (value: unknown) => tsString(text(value)))
  hbs.registerHelper('md', (value: unknown) => markdown(text(value)))
  hbs.registerHelper('env', (value: unknown) => dotenvValue(text(value)))
  return hbs
}

/** The values templates see. Every user string is wrapped in UserText. */
function templateContext(options: ProjectOptions, runtimeDependency: string) {
  return {
    packageName: options.packageName,
    name: new UserText(options.name),
    description: new UserText(options.description),
    skills: options.skills.map((skill) => ({
      id: skill.id,
      name: new UserText(skill.name),
      description: new UserText(skill.description),
      tags: skill.tags.map((tag) => new UserText(tag)),
      examples: skill.examples.map((example) => new UserText(example)),
    })),
    firstSkillId: options.skills[0]!.id,
    skillIds: options.skills.map((skill) => skill.id),
    /** What the generated test sends to each skill: its first example, else a greeting. */
    skillCases: options.skills.map((skill) => ({ id: skill.id, example: new UserText(skill.examples[0] ?? 'Hello') })),
    /** A fresh credential for `.env` when the card declares authentication. */
    secret: randomBytes(24).toString('base64url'),
    /** The team's planner's own credential for its writer, never a client's (see the team's src/writer-link.ts). */
    plannerSecret: randomBytes(24).toString('base64url'),
    skillIdUnion: options.skills.map((skill) => JSON.stringify(skill.id)).join(' | '),
    streaming: options.streaming,
    pushNotifications: options.pushNotifications,
    /** src/telemetry.ts and OpenTelemetry's SDK in the dependencies (Node projects only). */
    telemetry: options.telemetry,
    authScheme: options.auth === 'apikey' ? 'apiKey' : options.auth === 'none' ? undefined : options.auth,
    authBearer: options.auth === 'bearer',
    authApiKey: options.auth === 'apikey',
    /** JWTs of an OpenID Connect issuer, sent as `Authorization: Bearer` too; .env holds the issuer, not a secret. */
    authOidc: options.auth === 'oidc',
    /** The scheme's credential travels in `Authorization: Bearer` (a listed token or a JWT). */
    authorizationHeader: options.auth === 'bearer' || options.auth === 'oidc',
    /** A credential generated into .env (bearer, apikey): the issuer of `oidc` is no secret to generate. */
    generatedCredential: options.auth === 'bearer' || options.auth === 'apikey',
    oidcIssuer: options.oidcIssuer === undefined ? undefined : new UserText(options.oidcIssuer),
    oidcAudience: options.oidcAudience === undefined ? undefined : new UserText(options.oidcAudience),
    template: options.template,
    multiTurn: options.template === 'multi-turn',
    /** Two agents (src/agents/planner.ts, writer.ts) served together by src/server.ts, not one src/agent.ts. */
    team: options.template === 'team',
    // A template that calls a language model (its settings in .env, a stand-in server in its tests), and its framework.
    llm: MODEL_TEMPLATES.has(options.template),
    aiSdk: options.template === 'ai-sdk',
    mastra: options.template === 'mastra',
    langgraph: options.template === 'langgraph',
    // A .env to pass on (`docker run --env-file .env`): the credential, the model's key.
    dotenv: options.auth !== 'none' || MODEL_TEMPLATES.has(options.template),
    runtimeDependency,
    /** The Node.js of package.json's `engines`: what the template's and the runtime's dependencies declare. */
    nodeEngine: `>=${nodeRequirement(options).version}`,
    nodeTypes: nodeRequirement(options).types,
    /** As a person writes it: 22.22, 22. */
    nodeMinimum: nodeRequirement(options).version.replace(/(\.0)+$/, ''),
    node: options.runtime === 'node',
    bun: options.runtime === 'bun',
    deno: options.runtime === 'deno',
    workers: options.runtime === 'workers',
    /** Each deploy target chosen (`deploy.k8s`…); a platform's README section says how to build the image. */
    deploy: Object.fromEntries(DEPLOY_TARGETS.map((target) => [target, options.deploy.includes(target)])),
    /** Some platform runs the Docker image (the docker section then says so). */
    deployPlatforms: options.deploy.some((target) => target !== 'docker'),
    /** The service, Deployment or app name the platforms show. */
    serviceName: toServiceName(options.packageName),
    agentRuntimeName: toAgentRuntimeName(options.packageName),
    sizing: DEPLOY_SIZING,
    /** The Worker's name in wrangler.jsonc: the package name as Cloudflare takes it. */
    workerName: toWorkerName(options.packageName),
    pm: options.pm,
    run: {
      ...Object.fromEntries(
        ['dev', 'start', 'test', 'card', 'deploy'].map((script) => [script, projectCommand(options, script)]),
      ),
      // Deno type-checks with its own `deno check`: the task is named after it.
      typecheck: projectCommand(options, options.runtime === 'deno' ? 'check' : 'typecheck'),
    },
  }
}

/**
 * A TypeScript expression for a JSON value, laid out as a person would write it: objects one key a line,
 * lists of plain values on one line. Strings are JSON strings with `<` escaped (see `tsString`).
 */
export function tsValue(value: unknown, indent = ''): string {
  if (Array.isArray(value)) {
    if (value.every((item) => typeof item !== 'object' || item === null))
      return `[${value.map((item) => tsValue(item)).join(', ')}]`
    const inner = `${indent}  `
    return `[\n${value.map((item) => `${inner}${tsValue(item, inner)},`).join('\n')}\n${indent}]`
  }
  if (value !== null && typeof value === 'object') {
    const inner = `${indent}  `
    // A plain or quoted `__proto__` key would set the prototype; only a computed key stays a property.
    const keyOf = (key: string) =>
      key === '__proto__' ? `[${tsString(key)}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? key : tsString(key)
    const lines = Object.entries(value).map(([key, item]) => `${inner}${keyOf(key)}: ${tsValue(item, inner)},`)
    return `{\n${lines.join('\n')}\n${indent}}`
  }
  return typeof value === 'string' ? tsString(value) : JSON.stringify(value)
}

/** Files of a folder, relative, sorted. */
function listFiles(root: string, dir = root): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const path = join(dir, entry)
      return statSync(path).isDirectory() ? listFiles(root, path) : [relative(root, path).split(sep).join('/')]
    })
}

/** `_gitignore` → `.gitignore`: dotfiles are stored without the dot, since npm drops some of them. */
const outputPath = (templatePath: string): string =>
  templatePath
    .replace(/\.hbs$/, '')
    .split('/')
    .map((part) => part.replace(/^_/, '.'))
    .join('/')

/**
 * Renders `base/`, then the chosen runtime's folder (`runtimes/<name>/`: its entry and configuration; Node's needs
 * none), then each deploy target's (`deploy/<target>/`: the Dockerfile, a platform's manifests), then `llm/` for a
 * template that calls a model, then `ai-sdk-model/` for one whose model is the AI SDK's (`ai-sdk`, `mastra`: the
 * `src/model.ts` and `test/model.test.ts` they share), then the chosen template's folder over them (same path: the
 * later layer wins). `.hbs` files go through Handlebars with the partials of `partials/`; the rest are copied.
 */
export function renderProject(
  templatesDir: string,
  options: ProjectOptions,
  runtimeDependency: string,
): RenderedFile[] {
  const hbs = createHandlebars()
  const partialsDir = join(templatesDir, 'partials')
  for (const file of listFiles(partialsDir)) {
    hbs.registerPartial(file.replace(/\.hbs$/, ''), readFileSync(join(partialsDir, file), 'utf8'))
  }
  const context = templateContext(options, runtimeDependency)
  const files = new Map<string, RenderedFile>()
  const layers = [
    'base',
    `runtimes/${options.runtime}`,
    ...options.deploy.map((target) => `deploy/${target}`),
    ...(MODEL_TEMPLATES.has(options.template) ? ['llm'] : []),
    ...(AI_SDK_MODEL_TEMPLATES.has(options.template) ? ['ai-sdk-model'] : []),
    options.template,
  ]
  for (const layer of layers) {
    const layerDir = join(templatesDir, layer)
    // A folder git cannot keep empty (the Node runtime's) is simply absent.
    if (!existsSync(layerDir)) continue
    for (const file of listFiles(layerDir)) {
      const source = readFileSync(join(layerDir, file), 'utf8')
      const content = file.endsWith('.hbs') ? hbs.compile(source, { noEscape: true, strict: true })(context) : source
      const path = outputPath(file)
      // A template that renders to nothing (`.env` without authentication) is not written.
      if (content.trim()) files.set(path, { path, content, ...(PRIVATE_FILES.has(path) ? { mode: 0o600 } : {}) })
      else files.delete(path)
    }
  }
  return [...files.values()]
}
