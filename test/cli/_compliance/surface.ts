import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runtimeDir } from '../../_support.ts'
import { described } from './cli.ts'
import type { Check } from './context.ts'
import { type Doc, docOf } from './read.ts'

const { version } = JSON.parse(readFileSync(join(runtimeDir, 'package.json'), 'utf8')) as { version: string }

/** The tool's own surface: help, version, completion scripts, and the conformance command. */
export const surfaceChecks: Check[] = [
  {
    id: 'A2ACLI_CLI_001',
    how: 'a2a help, --help, help <command>, <command> --help, -v and --version',
    async run({ run }, observe) {
      const [help, dashHelp, helpSend, sendHelp, taskGetHelp, short, long] = await Promise.all([
        run(['help']),
        run(['--help']),
        run(['help', 'send']),
        run(['send', '--help']),
        run(['task', 'get', '--help']),
        run(['-v']),
        run(['--version']),
      ])
      for (const [what, each, usage] of [
        ['a2a help', help, 'Usage: a2a '],
        ['a2a --help', dashHelp, 'Usage: a2a '],
        ['a2a help send', helpSend, 'Usage: a2a send'],
        ['a2a send --help', sendHelp, 'Usage: a2a send'],
        ['a2a task get --help', taskGetHelp, 'Usage: a2a task get'],
      ] as const)
        observe.expect(
          each.code === 0 && each.stdout.startsWith(usage),
          `${what}: usage on stdout, exit 0`,
          described(each),
        )
      for (const command of ['send', 'card', 'task', 'config', 'completion', 'conformance', 'auth'])
        observe.expect(
          new RegExp(`^  ${command}\\b`, 'm').test(help.stdout),
          `a2a help to list ${command}`,
          described(help),
        )
      for (const [flag, each] of [
        ['-v', short],
        ['--version', long],
      ] as const)
        observe.expect(
          each.code === 0 && each.stdout.trim() === version,
          `${flag}: the version ${version}`,
          described(each),
        )
      observe.expect(
        /--output <format>[^-]*default: "text"/.test(sendHelp.stdout.replace(/\s+/g, ' ')) &&
          /--poll-interval <duration>[^-]*default: "2s"/.test(taskGetHelp.stdout.replace(/\s+/g, ' ')),
        '--help to show the defaults (output text, poll interval 2s)',
        described(sendHelp),
      )
    },
  },
  {
    id: 'A2ACLI_CLI_002',
    how: 'a2a completion bash, zsh and fish: scripts naming the commands; bash -n reads the bash one',
    async run({ run, cwd }, observe) {
      const completion = (shell: string) => run(['completion', shell])
      const [bash, zsh, fish, unknown] = await Promise.all([
        completion('bash'),
        completion('zsh'),
        completion('fish'),
        completion('tcsh'),
      ])
      for (const [shell, each] of [
        ['bash', bash],
        ['zsh', zsh],
        ['fish', fish],
      ] as const)
        observe.expect(
          each.code === 0 && /\bsend\b/.test(each.stdout) && /\bsubscribe\b/.test(each.stdout),
          `${shell}: a script that completes the commands`,
          described(each),
        )
      writeFileSync(join(cwd, 'a2a.bash'), bash.stdout)
      let parses = true
      try {
        execFileSync('bash', ['-n', join(cwd, 'a2a.bash')], { stdio: 'ignore' })
      } catch {
        parses = false
      }
      observe.expect(parses, 'bash to read the bash script without a syntax error', 'bash -n refused it')
      observe.expect(unknown.code === 2, 'an unknown shell to be a usage error', described(unknown))
    },
  },
  {
    id: 'A2ACLI_CONFORM_001',
    how: "a2a conformance against the SDK's agent and this runtime's (-o json): every check run, none failed, exit 0",
    timeoutMs: 60_000,
    async run({ agents, run }, observe) {
      const [sdk, runtime] = await Promise.all([
        run(['conformance', agents.sdk.url, '-o', 'json'], { limitMs: 55_000 }),
        run(['conformance', agents.runtime, '-o', 'json', '--webhook', 'http://127.0.0.1:9/conformance-hook'], {
          limitMs: 55_000,
        }),
      ])
      for (const [who, each] of [
        ['SDK', sdk],
        ['runtime', runtime],
      ] as const) {
        const report = docOf(each) as Doc
        const checks = (report?.checks ?? []) as Doc[]
        observe.expect(
          each.code === 0 && checks.length > 20 && checks.filter((check) => check.status === 'fail').length === 0,
          `the ${who} agent checked against the kit's requirements, exit 0`,
          `${described(each)}; ${checks
            .filter((check) => check.status === 'fail')
            .map((check) => check.id)
            .join(', ')}`,
        )
        observe.expect(
          checks.some((check) => /^CORE-/.test(check.id)) && checks.some((check) => /^CARD-/.test(check.id)),
          `the kit's requirement ids in the ${who} report`,
          described(each),
        )
      }
    },
  },
]
