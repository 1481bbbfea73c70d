import { existsSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { parse } from 'yaml'
import { runtimeDir } from '../../_support.ts'
import type { Check } from './context.ts'
import { filesUnder } from './read.ts'

const SKILLS = join(runtimeDir, 'skills')

/** Every command of the tool, as a skill might name it. */
const COMMANDS = [
  'card get',
  'send',
  'task get',
  'task cancel',
  'task list',
  'task subscribe',
  'task push-config',
  'task download',
  'chat',
  'config show',
  'completion',
  'conformance',
  'auth login',
  'auth status',
  'auth logout',
  'dev',
  'start',
  'card validate',
]

/** The skill's files: its SKILL.md split into frontmatter and body, and its worked examples. */
function readSkill() {
  const skills = existsSync(SKILLS) ? filesUnder(SKILLS).filter((path) => path.endsWith('/SKILL.md')) : []
  const file = join(SKILLS, 'a2a', 'SKILL.md')
  const text = existsSync(file) ? readFileSync(file, 'utf8') : ''
  const [, front = '', body = ''] = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text) ?? []
  const examplesFile = join(SKILLS, 'a2a', 'references', 'examples.md')
  const examples = existsSync(examplesFile) ? readFileSync(examplesFile, 'utf8') : ''
  let meta: Record<string, unknown> = {}
  try {
    meta = (parse(front) as Record<string, unknown>) ?? {}
  } catch {}
  return { skills: skills.map((path) => relative(runtimeDir, path)), meta, body, examples }
}

/** The Agent Skill shipped with the command (runtime/skills/a2a). */
export const skillChecks: Check[] = [
  {
    id: 'A2ACLI_SKILL_001',
    how: 'runtime/skills holds one SKILL.md: its frontmatter, its length, its pointers to --help and its examples file',
    async run(_context, observe) {
      const { skills, meta, body, examples } = readSkill()
      observe.expect(
        skills.length === 1 && skills[0] === 'skills/a2a/SKILL.md',
        'exactly one skill, skills/a2a',
        skills.join(', '),
      )
      observe.expect(meta.name === 'a2a', 'its name a2a, as its folder', String(meta.name))
      const description = String(meta.description ?? '')
      observe.expect(
        description.length > 40 && description.length <= 1024,
        'a description of up to 1024 characters',
        `${description.length}`,
      )
      observe.expect(
        /a2a-runtime/.test(String(meta.compatibility ?? '')) && /\ba2a\b/.test(String(meta.compatibility ?? '')),
        'compatibility prose naming the a2a command and its npm package',
        String(meta.compatibility),
      )
      const words = body.split(/\s+/).filter(Boolean).length
      observe.expect(words > 100 && words <= 700, 'a lean body (at most 700 words)', `${words} words`)
      observe.expect(/a2a --version/.test(body), 'a preflight check (a2a --version)', 'none')
      observe.expect(
        /a2a --help/.test(body) && /a2a <command> --help/.test(body),
        'the reader sent to --help',
        'not sent',
      )
      const named = COMMANDS.filter((command) => new RegExp(`\\ba2a ${command}\\b`).test(body))
      observe.expect(
        named.length <= COMMANDS.length / 3,
        'the command surface not listed (a third at most named)',
        named.join(', '),
      )
      observe.expect(/references\/examples\.md/.test(body), 'the body pointing at references/examples.md', 'no pointer')
      const commands = [...examples.matchAll(/^\$ (a2a .*)$/gm)].map((match) => match[1]!)
      observe.expect(
        commands.length >= 4 &&
          commands.some((line) => /-o json --stream/.test(line)) &&
          commands.some((line) => /--task-id/.test(line)),
        'worked examples: commands with their output, json and streamed, continuing a task',
        `${commands.length} commands`,
      )
    },
  },
  {
    id: 'A2ACLI_SKILL_002',
    how: "the skill's files free of RFC 2119 keywords, requirement ids and section references",
    async run(_context, observe) {
      const { body, examples } = readSkill()
      observe.expect(body.length > 0, 'a skill to read', 'none')
      for (const [what, text] of [
        ['SKILL.md', body],
        ['examples.md', examples],
      ] as const) {
        const keywords = text.match(/\b(MUST|SHALL|SHOULD|REQUIRED|RECOMMENDED|OPTIONAL)\b/g) ?? []
        observe.expect(keywords.length === 0, `${what}: no normative keyword`, keywords.join(', '))
        const ids = text.match(/A2ACLI_[A-Z_]+\d{3}|§\s?\d/g) ?? []
        observe.expect(ids.length === 0, `${what}: no requirement id or section`, ids.join(', '))
      }
    },
  },
]
