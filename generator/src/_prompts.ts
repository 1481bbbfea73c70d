import { basename, resolve } from 'node:path'
import prompts, { type PromptObject } from 'prompts'
import { earlierAnswers } from './_earlier-answers.js'
import { busyEntries } from './_target-dir.js'
import { useCodePointTextPrompt } from './_text-prompt.js'
import { UsageError } from './errors.js'
import { assertSkillId, FALLBACK_PACKAGE_NAME, packageNameFromDir, toDisplayName } from './names.js'
import {
  ANSWER_RULES,
  type Answers,
  DEFAULT_DESCRIPTION,
  DEFAULT_DIR,
  DEPLOY_TARGET_NAMES,
  DEPLOY_TARGETS,
  type DeployTarget,
  defaultDisplayName,
  RUNTIME_NAMES,
  RUNTIMES,
  type RuntimeName,
  type Skill,
  TEMPLATES,
} from './options.js'

const TEMPLATE_HINTS: Record<(typeof TEMPLATES)[number], string> = {
  echo: 'one skill, answers at once, streaming progress',
  streaming: 'progress updates and an answer streamed in chunks',
  'multi-turn': 'asks a clarifying question, then answers',
  'ai-sdk': 'a model through the Vercel AI SDK (any OpenAI-compatible endpoint): tools, memory, streaming',
  mastra: 'a Mastra agent (any OpenAI-compatible endpoint): tools, asking the user, streaming',
  langgraph: 'a LangGraph.js ReAct agent (any OpenAI-compatible endpoint): tools, interrupt() to ask, streaming',
  team: 'two agents in one server: a planner that has a writer write over A2A, the context passed on',
}

const RUNTIME_HINTS: Record<RuntimeName, string> = {
  node: 'a2a start; Dockerfile included',
  bun: "Bun's own server",
  deno: "Deno's own server, tasks in deno.json",
  workers: 'a Worker and its Durable Object, wrangler dev and deploy',
}

const DEPLOY_HINTS: Record<DeployTarget, string> = {
  docker: 'the Dockerfile (every other target runs its image)',
  agentcore: 'the A2A container contract: port 9000, ARM64, the runtime config for the AWS CLI',
  cloudrun: 'service.yaml: PORT, SIGTERM, probes',
  k8s: 'a Deployment and a Service: probes on /healthz and /readyz, memory sized to the budgets',
  fly: 'fly.toml: the internal port, checks on /healthz',
}

const list = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)

useCodePointTextPrompt()

const CANCELLED = 'Cancelled: nothing was written.'

/** The Cancel choice: a refusal (exit 1). */
function cancelled(): never {
  throw new UsageError(CANCELLED, 1)
}

/** Ctrl-C (or Escape) at a prompt: an interrupt, exit 130 as for SIGINT, in one line. */
function onCancel(): never {
  throw new UsageError(CANCELLED, 130)
}

/** A prompt's `validate` from an answer rule of `options.ts`: the same rule the flag meets. */
function validateWith(rule: (value: string) => string | undefined, label = ''): (value: string) => true | string {
  return (value) => {
    const problem = rule(value)
    return problem ? `${label}${problem}` : true
  }
}

/** As `validateWith`, but a blank answer is fine: it leaves the setting to be filled in later. */
function optional(rule: (value: string) => string | undefined, label: string): (value: string) => true | string {
  const check = validateWith(rule, label)
  return (value) => (value.trim() ? check(value) : true)
}

const blankAsUnset = (value: string): string | undefined => value.trim() || undefined

/** Refuses, in its prompt, a directory that is a file or runs through one. */
function validateDir(cwd: string): (value: string) => true | string {
  const notEmpty = validateWith(ANSWER_RULES.dir, 'The directory ')
  return (value) => {
    const empty = notEmpty(value)
    if (empty !== true) return empty
    try {
      busyEntries(resolve(cwd, value.trim()))
      return true
    } catch (error) {
      return (error as Error).message
    }
  }
}

async function ask<T>(question: PromptObject): Promise<T> {
  const answers = await prompts(question, { onCancel })
  return answers[question.name as string] as T
}

/**
 * Whether a directory holds the project some answers make, left there by an earlier run: then it is continued.
 * Given by the command, which renders the project to compare (`isEarlierRun`).
 */
export type EarlierRunCheck = (answers: Answers) => boolean

/**
 * The directory, asked until it is one the project can go in, each checked as soon as it is named. A busy one
 * (other files in it) offers another directory, writing beside those files (`--force`: nothing is overwritten) or
 * cancelling; it never offers to delete them. One that holds this very project from an earlier run takes that
 * run's answers (read back from its files, checked by rendering them), so nothing more is asked: resolves true then.
 */
async function askDirectory(answers: Answers, cwd: string, isEarlierRun: EarlierRunCheck): Promise<boolean> {
  for (;;) {
    if (answers.dir === undefined) {
      answers.dir = (
        await ask<string>({
          type: 'text',
          name: 'dir',
          message: 'Project directory',
          initial: DEFAULT_DIR,
          validate: validateDir(cwd),
        })
      ).trim()
    }
    const dir = resolve(cwd, answers.dir)
    const busy = busyEntries(dir)
    if (!busy.length || answers.force) return false
    const earlier = earlierAnswers(dir, answers).find(isEarlierRun)
    if (earlier) {
      Object.assign(answers, earlier)
      return true
    }
    const shown = busy.length > 3 ? `${busy.slice(0, 3).join(', ')} and ${busy.length - 3} more` : busy.join(', ')
    const choice = await ask<'another' | 'beside' | 'cancel'>({
      type: 'select',
      name: 'busy',
      message: `${answers.dir} is not empty (${shown})`,
      choices: [
        { title: 'Choose another directory', value: 'another' },
        // Beside another project's package.json the project's own would be in the way: refused after every question.
        ...(busy.includes('package.json')
          ? []
          : [
              {
                title: 'Write the project beside these files (--force: none of them is overwritten or deleted)',
                value: 'beside',
              },
            ]),
        { title: 'Cancel', value: 'cancel' },
      ],
      initial: 0,
    })
    if (choice === 'cancel') cancelled()
    if (choice === 'beside') answers.force = true
    else answers.dir = undefined
  }
}

/** Asks for what the flags left out, and only that. */
export async function askMissing(given: Answers, cwd: string, isEarlierRun: EarlierRunCheck): Promise<Answers> {
  const answers: Answers = { ...given }
  // Continued: the earlier run's answers are the project's, down to what only its .env holds (an OIDC issuer).
  if (await askDirectory(answers, cwd, isEarlierRun)) return answers
  const dir = resolve(cwd, answers.dir ?? DEFAULT_DIR)

  const more: PromptObject[] = []
  // The team template rules out a runtime, an authentication and a deploy target: their prompts leave them out.
  const isTeam = (values: Record<string, unknown>) => (answers.template ?? values.template) === 'team'
  // As create-vite does: a directory name that makes no valid package name ("天气机器人") asks for one.
  const made = packageNameFromDir(basename(dir))
  if (answers.packageName === undefined && (made.fallback || made.problem)) {
    more.push({
      type: 'text',
      name: 'packageName',
      message: 'Package name (for npm)',
      initial: made.problem ? FALLBACK_PACKAGE_NAME : made.name,
      validate: validateWith(ANSWER_RULES.packageName),
      format: (v: string) => v.trim(),
    })
  }
  if (answers.name === undefined)
    more.push({
      type: 'text',
      name: 'name',
      message: 'Agent name (shown on its card)',
      initial: defaultDisplayName(dir),
      validate: validateWith(ANSWER_RULES.name, 'The name '),
    })
  if (answers.description === undefined) {
    more.push({
      type: 'text',
      name: 'description',
      message: 'What does the agent do?',
      initial: DEFAULT_DESCRIPTION,
      validate: validateWith(ANSWER_RULES.description, 'The description '),
    })
  }
  if (answers.template === undefined) {
    more.push({
      type: 'select',
      name: 'template',
      message: 'Template',
      choices: TEMPLATES.map((t) => ({ title: t, value: t, description: TEMPLATE_HINTS[t] })),
      initial: 0,
    })
  }
  if (answers.runtime === undefined) {
    more.push({
      type: 'select',
      name: 'runtime',
      message: 'Runtime',
      // The team template's two agents share one server, which a Worker is not (options.ts refuses the pair).
      choices: (_: unknown, values: Record<string, unknown>) =>
        RUNTIMES.filter((runtime) => runtime !== 'workers' || !isTeam(values)).map((runtime) => ({
          title: RUNTIME_NAMES[runtime],
          value: runtime,
          description: RUNTIME_HINTS[runtime],
        })),
      initial: 0,
    })
  }
  // `confirm` reads "(Y/n)" while asked and "yes" or "no" once answered: the choice shows without colour.
  if (answers.streaming === undefined)
    more.push({ type: 'confirm', name: 'streaming', message: 'Stream answers (message/stream)?', initial: true })
  if (answers.pushNotifications === undefined) {
    more.push({
      type: 'confirm',
      name: 'pushNotifications',
      message: 'Push notifications (task updates POSTed to client webhooks)?',
      initial: false,
    })
  }
  if (answers.auth === undefined) {
    more.push({
      type: 'select',
      name: 'auth',
      message: 'Authentication',
      // The team's planner has no token of an issuer to call its writer with (options.ts refuses the pair).
      choices: (_: unknown, values: Record<string, unknown>) => [
        { title: 'none', value: 'none' },
        { title: 'bearer token', value: 'bearer' },
        { title: 'API key (X-API-Key)', value: 'apikey' },
        ...(isTeam(values) ? [] : [{ title: 'OpenID Connect (JWTs of your issuer)', value: 'oidc' }]),
      ],
      initial: 0,
    })
  }
  // Only for OpenID Connect; left blank, .env holds a placeholder to fill in before the agent serves.
  const oidc = (_: unknown, values: Record<string, unknown>) =>
    (answers.auth ?? values.auth) === 'oidc' ? 'text' : null
  if (answers.oidcIssuer === undefined) {
    more.push({
      type: oidc,
      name: 'oidcIssuer',
      message: 'OpenID Connect issuer URL (blank: set A2A_OIDC_ISSUER in .env later)',
      validate: optional(ANSWER_RULES.oidcIssuer, 'The issuer '),
      format: blankAsUnset,
    })
  }
  if (answers.oidcAudience === undefined) {
    more.push({
      type: oidc,
      name: 'oidcAudience',
      message: 'Audience its tokens name, aud (blank: set A2A_OIDC_AUDIENCE in .env later)',
      validate: optional(ANSWER_RULES.oidcAudience, 'The audience '),
      format: blankAsUnset,
    })
  }
  // Only for Node: every target runs the Dockerfile's image, which only the Node project has (see options.ts).
  if (answers.deploy === undefined) {
    more.push({
      type: (_: unknown, values: Record<string, unknown>) =>
        (answers.runtime ?? values.runtime) === 'node' ? 'multiselect' : null,
      name: 'deploy',
      message: 'Deploy to',
      // AgentCore's contract is one agent at POST /: not the team's two (options.ts refuses the pair).
      choices: (_: unknown, values: Record<string, unknown>) =>
        DEPLOY_TARGETS.filter((target) => target !== 'agentcore' || !isTeam(values)).map((target) => ({
          title: DEPLOY_TARGET_NAMES[target],
          value: target,
          description: DEPLOY_HINTS[target],
          selected: target === 'docker',
        })),
      hint: 'space selects, enter confirms',
      instructions: false,
      // Nothing chosen is no target at all, not the default (which an answer left undefined keeps).
      format: (targets: DeployTarget[] | undefined) => (targets && !targets.length ? ['none'] : targets),
    })
  }
  // Only for Node: the project starts OpenTelemetry's Node SDK (see options.ts).
  if (answers.telemetry === undefined) {
    more.push({
      type: (_: unknown, values: Record<string, unknown>) =>
        (answers.runtime ?? values.runtime) === 'node' ? 'confirm' : null,
      name: 'telemetry',
      message: 'OpenTelemetry (traces, metrics and logs over OTLP once OTEL_EXPORTER_OTLP_ENDPOINT is set)?',
      initial: false,
    })
  }
  Object.assign(answers, await prompts(more, { onCancel }))
  if (answers.skills === undefined) answers.skills = await askSkills()
  return answers
}

/** As many skills as wanted; none means the template's own skill. */
async function askSkills(): Promise<Skill[] | undefined> {
  const skills: Skill[] = []
  for (;;) {
    const { add } = await prompts(
      {
        type: 'confirm',
        name: 'add',
        message: skills.length
          ? 'Add another skill?'
          : "Declare the agent's skills now? (no: the template's example skill)",
        initial: false,
      },
      { onCancel },
    )
    if (!add) return skills.length ? skills : undefined
    const taken = new Set(skills.map((skill) => skill.id))
    const skill = await prompts(
      [
        {
          type: 'text',
          name: 'id',
          message: 'Skill id',
          validate: (id: string) => {
            try {
              assertSkillId(id.trim())
            } catch (error) {
              return (error as Error).message
            }
            return taken.has(id.trim()) ? 'That id is taken' : true
          },
        },
        { type: 'text', name: 'name', message: 'Skill name', initial: (prev: string) => toDisplayName(prev) },
        { type: 'text', name: 'description', message: 'What it does' },
        { type: 'text', name: 'tags', message: 'Tags (comma-separated)' },
        { type: 'text', name: 'examples', message: 'Example requests (comma-separated)' },
      ],
      { onCancel },
    )
    const name = skill.name.trim() || toDisplayName(skill.id.trim())
    skills.push({
      id: skill.id.trim(),
      name,
      // A blank answer takes the name, as --skill does: a skill's description must not be empty.
      description: skill.description.trim() || name,
      tags: list(skill.tags).length ? list(skill.tags) : [skill.id.trim()],
      examples: list(skill.examples),
    })
  }
}
