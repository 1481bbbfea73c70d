import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BEARER } from './agents.ts'
import { described, envelopeOf, field } from './cli.ts'
import type { Check } from './context.ts'
import { type Doc, docOf, filesUnder, sentTask, stateOf } from './read.ts'

const COMPLETED = 'TASK_STATE_COMPLETED'

/** `config show -o json`'s entry for a variable. */
const shown = (doc: Doc, variable: string) =>
  ((doc?.options ?? []) as Doc[]).find((option) => option.variable === variable) as
    | { value: unknown; source: string }
    | undefined

/** Configuration: where it lives, what it may hold, and the order its sources win in. */
export const configChecks: Check[] = [
  {
    id: 'A2ACLI_CONFIG_001',
    how: 'the global .env in $XDG_CONFIG_HOME/a2a-cli read; a secret others can read refused; config show read-only',
    async run({ agents, run, configHome, cwd }, observe) {
      const dir = join(configHome, 'a2a-cli')
      mkdirSync(dir, { recursive: true })
      const file = join(dir, '.env')
      writeFileSync(file, `A2ACLI_AGENT_CARD=${agents.guarded}\nA2ACLI_BEARER=${BEARER}\n`, { mode: 0o600 })
      chmodSync(file, 0o600)
      const before = { text: readFileSync(file, 'utf8'), modified: statSync(file).mtimeMs }
      const [sent, show] = await Promise.all([
        run(['send', '-o', 'json', 'configured']),
        run(['config', 'show', '-o', 'json']),
      ])
      observe.expect(
        stateOf(sentTask(sent)) === COMPLETED,
        'send to reach the agent and credential of the global file',
        described(sent),
      )
      observe.expect(
        shown(docOf(show), 'A2ACLI_BEARER')?.value === '[redacted]' &&
          shown(docOf(show), 'A2ACLI_AGENT_CARD')?.source === `file ${file}`,
        'config show: each value with its file, the secret redacted',
        described(show),
      )
      observe.expect(
        readFileSync(file, 'utf8') === before.text && statSync(file).mtimeMs === before.modified,
        'config show to leave the file as it was',
        'the file changed',
      )
      chmodSync(file, 0o644)
      const exposed = await run(['send', '-o', 'json', 'configured'])
      observe.expect(
        exposed.code === 2 && envelopeOf(exposed)?.code === 'A2ACLI_ERR_USAGE' && /chmod 600/.test(exposed.stdout),
        'a secret in a file others can read refused, naming chmod 600',
        described(exposed),
      )
      const taskId = sentTask(sent)?.id ?? 'none'
      observe.expect(
        !filesUnder(cwd).some((path) => readFileSync(path, 'utf8').includes(taskId)),
        'no session state recorded: no file holds the task id',
        'a file holds it',
      )
    },
  },
  {
    id: 'A2ACLI_CONFIG_002',
    how: 'A2ACLI_TIMEOUT in the global file, a local .env, the environment; -o as a flag; a per-agent file by --config',
    async run({ agents, run, configHome, cwd }, observe) {
      mkdirSync(join(configHome, 'a2a-cli'), { recursive: true })
      writeFileSync(join(configHome, 'a2a-cli', '.env'), 'A2ACLI_TIMEOUT=10s\nA2ACLI_POLL_INTERVAL=3s\n')
      const project = join(cwd, 'project')
      mkdirSync(join(project, 'deeper'), { recursive: true })
      const show = (options: { cwd?: string; env?: Record<string, string> } = {}, ...flags: string[]) =>
        run(['config', 'show', '-o', 'json', ...flags], options)
      const [globalOnly] = await Promise.all([show({ cwd: project })])
      writeFileSync(join(project, '.env'), 'A2ACLI_TIMEOUT=20s\n')
      const [local, env, defaults] = await Promise.all([
        show({ cwd: join(project, 'deeper') }),
        show({ cwd: join(project, 'deeper'), env: { A2ACLI_TIMEOUT: '30s' } }),
        show({ cwd }),
      ])
      const timeout = (each: typeof local) => shown(docOf(each), 'A2ACLI_TIMEOUT')
      observe.expect(
        timeout(globalOnly)?.value === '10s' && /a2a-cli\/\.env$/.test(timeout(globalOnly)?.source ?? ''),
        'the global file over the default',
        JSON.stringify(timeout(globalOnly)),
      )
      observe.expect(
        timeout(local)?.value === '20s' &&
          timeout(local)?.source === `file ${join(project, '.env')}` &&
          shown(docOf(local), 'A2ACLI_POLL_INTERVAL')?.value === '3s',
        'the local .env (found from a folder below) over the global file, which still sets the rest',
        JSON.stringify(timeout(local)),
      )
      observe.expect(
        timeout(env)?.value === '30s' && timeout(env)?.source === 'env A2ACLI_TIMEOUT',
        'the environment over the files',
        JSON.stringify(timeout(env)),
      )
      observe.expect(
        shown(docOf(env), 'A2ACLI_OUTPUT')?.source === 'flag' &&
          shown(docOf(defaults), 'A2ACLI_A2A_VERSION')?.source === 'default',
        'a flag shown as the flag, an unset option as the default',
        JSON.stringify([shown(docOf(env), 'A2ACLI_OUTPUT'), shown(docOf(defaults), 'A2ACLI_A2A_VERSION')]),
      )
      const [flagWins, envWins] = await Promise.all([
        run(['send', '-a', agents.runtime, '-o', 'text', 'hello'], { env: { A2ACLI_OUTPUT: 'json' } }),
        run(['send', '-a', agents.runtime, 'hello'], { env: { A2ACLI_OUTPUT: 'json' } }),
      ])
      observe.expect(
        field(flagWins.stdout, 'State') === 'COMPLETED' && stateOf(sentTask(envWins)) === COMPLETED,
        'in use: -o text over A2ACLI_OUTPUT=json, which wins over the default',
        `${described(flagWins)}; ${described(envWins)}`,
      )
      const agentFile = join(cwd, 'sdk-agent.env')
      writeFileSync(agentFile, `A2ACLI_AGENT_CARD=${agents.sdk.url}\nA2ACLI_OUTPUT=json\n`)
      const scoped = await run(['send', '--config', agentFile, 'hello'], { cwd: project })
      observe.expect(
        sentTask(scoped)?.artifacts?.[0]?.parts !== undefined &&
          stateOf(sentTask(scoped)) === COMPLETED &&
          !agents.received.some((message) => message.taskId === sentTask(scoped)?.id),
        "--config with an agent's own file: its agent and settings, in place of the local .env",
        described(scoped),
      )
    },
  },
]
