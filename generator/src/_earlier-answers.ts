import { existsSync, lstatSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  type Answers,
  DEPLOY_TARGETS,
  type DeployTarget,
  PACKAGE_MANAGERS,
  type Skill,
  type TemplateName,
} from './options.js'

/**
 * The answers an earlier run may have been given, read back from the project it wrote, so that a directory holding
 * this very project is known as soon as it is named, before any other question. Each is only a candidate: the
 * project it renders must match the directory (`isEarlierRun`). What the files cannot tell (which of the templates
 * without a framework, which package manager) gives one candidate each; answers given now (flags) are kept as given.
 */
export function earlierAnswers(dir: string, given: Answers): Answers[] {
  const manifest = readJson(join(dir, 'package.json')) as Manifest | undefined
  const agent = readText(join(dir, 'src/agent.ts'))
  const test = readText(join(dir, 'test/agent.test.ts'))
  if (!manifest || agent === undefined || test === undefined) return []
  if (typeof manifest.name !== 'string' || typeof manifest.description !== 'string') return []
  const name = jsonString(/^ {4}expect\(card\.name\)\.toBe\(("(?:[^"\\\n]|\\.)*")\)$/m.exec(test)?.[1])
  const skills = skillsOf(agent)
  const capabilities = /^ {4}capabilities: \{ streaming: (true|false), pushNotifications: (true|false) \},$/m.exec(
    agent,
  )
  if (name === undefined || !skills || !capabilities) return []
  const scheme = /^ {4}authentication: \{ schemes: \['(bearer|apiKey|oidc)'\] \},$/m.exec(agent)?.[1]
  const recovered: Answers = {
    packageName: manifest.name,
    name,
    description: manifest.description,
    skills,
    streaming: capabilities[1] === 'true',
    pushNotifications: capabilities[2] === 'true',
    // --telemetry adds OpenTelemetry's SDK to the dependencies (and src/telemetry.ts, which imports it).
    telemetry: '@opentelemetry/sdk-trace-node' in (manifest.dependencies ?? {}),
    // The issuer and audience of `oidc` are in .env only, which an earlier run's project keeps as it is.
    auth: scheme === 'apiKey' ? 'apikey' : (scheme ?? 'none'),
    runtime: runtimeOf(dir, manifest),
    deploy: deployOf(dir),
  }
  const templates = given.template ? [given.template] : templatesOf(manifest.dependencies ?? {})
  const managers = given.pm ? [given.pm] : PACKAGE_MANAGERS
  // What was given now wins: a different answer makes a different project, which the comparison then refuses.
  const defined = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined))
  return templates.flatMap((template) => managers.map((pm) => ({ ...recovered, template, pm, ...defined })))
}

interface Manifest {
  name?: unknown
  description?: unknown
  scripts?: Record<string, unknown>
  dependencies?: Record<string, unknown>
}

/** A file's text, when it is a file (never through a link) of a size a generated one has. */
function readText(path: string): string | undefined {
  try {
    const stat = lstatSync(path)
    return stat.isFile() && stat.size <= 1024 * 1024 ? readFileSync(path, 'utf8') : undefined
  } catch {
    return undefined
  }
}

function readJson(path: string): unknown {
  const text = readText(path)
  try {
    return text === undefined ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A JSON string literal (as `tsString` writes them), or undefined. */
function jsonString(literal: string | undefined): string | undefined {
  if (literal === undefined) return undefined
  try {
    const value: unknown = JSON.parse(literal)
    return typeof value === 'string' ? value : undefined
  } catch {
    return undefined
  }
}

/** The framework a template depends on names it; the others write the same package.json. */
function templatesOf(dependencies: Record<string, unknown>): TemplateName[] {
  if ('@mastra/core' in dependencies) return ['mastra']
  if ('@langchain/langgraph' in dependencies) return ['langgraph']
  if ('ai' in dependencies) return ['ai-sdk']
  return ['echo', 'streaming', 'multi-turn']
}

/** Each deploy target writes a file of its own; the Dockerfile is docker's, which the others bring along. */
function deployOf(dir: string): string[] {
  const files: Record<DeployTarget, string> = {
    docker: 'Dockerfile',
    agentcore: 'agentcore/runtime.json',
    cloudrun: 'service.yaml',
    k8s: 'k8s/deployment.yaml',
    fly: 'fly.toml',
  }
  const found = DEPLOY_TARGETS.filter((target) => existsSync(join(dir, files[target])))
  return found.length ? found : ['none']
}

function runtimeOf(dir: string, manifest: Manifest): string {
  if (existsSync(join(dir, 'deno.json'))) return 'deno'
  if (existsSync(join(dir, 'wrangler.jsonc'))) return 'workers'
  return manifest.scripts?.start === 'bun src/server.ts' ? 'bun' : 'node'
}

/**
 * The card's skills from `const skills: AgentSkill[] = …`, as `tsValue` lays them out: JSON but for bare keys and
 * trailing commas, which a tokenizer turns back into JSON (never an evaluation of the file).
 */
function skillsOf(agent: string): Skill[] | undefined {
  const start = agent.indexOf('\nconst skills: AgentSkill[] = ')
  if (start < 0) return undefined
  const literal = agent.slice(agent.indexOf('=', start) + 1, agent.indexOf('\n\n', start + 1))
  const tokens = literal.match(/"(?:[^"\\\n]|\\.)*"|[A-Za-z_$][\w$]*|-?\d[\d.eE+-]*|[[\]{},:]|\S/g) ?? []
  const json = tokens
    .map((token, i) => {
      const next = tokens[i + 1]
      if (token === ',' && (next === ']' || next === '}')) return ''
      if (/^[A-Za-z_$]/.test(token) && next === ':') return JSON.stringify(token)
      return token
    })
    .join('')
  try {
    const value: unknown = JSON.parse(json)
    return Array.isArray(value) && value.every(isSkill) ? value : undefined
  } catch {
    return undefined
  }
}

function isSkill(value: unknown): value is Skill {
  const skill = value as Partial<Record<keyof Skill, unknown>>
  const strings = (list: unknown) => Array.isArray(list) && list.every((item) => typeof item === 'string')
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof skill.id === 'string' &&
    typeof skill.name === 'string' &&
    typeof skill.description === 'string' &&
    strings(skill.tags) &&
    strings(skill.examples)
  )
}
