import prompts, { type PromptObject } from 'prompts'
import { type Answers, DEFAULT_DESCRIPTION, DEFAULT_DIR, type Skill, TEMPLATES } from './_options.js'
import { UsageError, assertSkillId, toDisplayName, toPackageName } from './_names.js'

const TEMPLATE_HINTS: Record<(typeof TEMPLATES)[number], string> = {
  echo: 'one skill, answers at once, streaming progress',
  streaming: 'progress updates and an answer streamed in chunks',
  'multi-turn': 'asks a clarifying question, then answers',
  llm: 'an OpenAI-compatible model, streamed token by token',
}

const list = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)

const onCancel = () => {
  throw new UsageError('Cancelled: nothing was written.', 1)
}

/** Asks for what the flags left out, and only that. */
export async function askMissing(given: Answers, checkDir: (dir: string) => void): Promise<Answers> {
  const answers: Answers = { ...given }
  const questions: PromptObject[] = []
  if (answers.dir === undefined) questions.push({ type: 'text', name: 'dir', message: 'Project directory', initial: DEFAULT_DIR, validate: (v: string) => (v.trim() ? true : 'Enter a directory') })
  Object.assign(answers, await prompts(questions, { onCancel }))
  checkDir(answers.dir ?? DEFAULT_DIR)

  const more: PromptObject[] = []
  if (answers.name === undefined) more.push({ type: 'text', name: 'name', message: 'Agent name (shown on its card)', initial: toDisplayName(toPackageName(answers.dir ?? DEFAULT_DIR)) })
  if (answers.description === undefined) more.push({ type: 'text', name: 'description', message: 'What does the agent do?', initial: DEFAULT_DESCRIPTION })
  if (answers.template === undefined) {
    more.push({ type: 'select', name: 'template', message: 'Template', choices: TEMPLATES.map((t) => ({ title: t, value: t, description: TEMPLATE_HINTS[t] })), initial: 0 })
  }
  if (answers.streaming === undefined) more.push({ type: 'toggle', name: 'streaming', message: 'Stream answers (message/stream)?', initial: true, active: 'yes', inactive: 'no' })
  if (answers.pushNotifications === undefined) {
    more.push({ type: 'toggle', name: 'pushNotifications', message: 'Push notifications (task updates POSTed to client webhooks)?', initial: false, active: 'yes', inactive: 'no' })
  }
  if (answers.auth === undefined) {
    more.push({
      type: 'select',
      name: 'auth',
      message: 'Authentication',
      choices: [
        { title: 'none', value: 'none' },
        { title: 'bearer token', value: 'bearer' },
        { title: 'API key (X-API-Key)', value: 'apikey' },
      ],
      initial: 0,
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
    const { add } = await prompts({ type: 'confirm', name: 'add', message: skills.length ? 'Add another skill?' : "Declare the agent's skills now? (no: the template's example skill)", initial: false }, { onCancel })
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
    skills.push({
      id: skill.id.trim(),
      name: skill.name.trim() || toDisplayName(skill.id),
      description: skill.description.trim() || skill.name.trim(),
      tags: list(skill.tags).length ? list(skill.tags) : [skill.id.trim()],
      examples: list(skill.examples),
    })
  }
}
