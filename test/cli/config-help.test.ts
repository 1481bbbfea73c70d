import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { takesConfiguration } from '../../runtime/src/cli/config/_configurable.ts'
import { effectiveDefaultsHelp } from '../../runtime/src/cli/config/_help.ts'

/** `--help` shows each option's default, and the value the environment or a file sets in its place. */

const { Command } = createRequire(import.meta.url)('commander') as typeof import('commander')

const root = mkdtempSync(join(tmpdir(), 'a2a-config-help-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

function helpOf(env: NodeJS.ProcessEnv, cwd: string, command: 'send' | 'dev' = 'send'): string {
  const program = new Command('a2a').configureHelp(effectiveDefaultsHelp({ env, cwd }))
  const send = takesConfiguration(program.command('send'))
  send.addOption(send.createOption('-o, --output <format>', 'text or json').choices(['text', 'json']).default('text'))
  send.option('--poll-interval <duration>', 'how often to ask', '2s')
  send.option('--bearer <token>', 'a bearer token')
  send.option('--svc-param <key:value>', 'a service parameter', (value: string, all: string[] = []) => [...all, value])
  send.option('--webhook-token <token>', 'a token for the webhook')
  send.option('--stream', 'follow the stream')
  if (command === 'dev') {
    const dev = program.command('dev').option('--poll-interval <duration>', 'how often to look', '1s')
    return dev.helpInformation().replace(/\s+/g, ' ')
  }
  // Lines wrap at the terminal's width: compare words.
  return send.helpInformation().replace(/\s+/g, ' ')
}

it('shows built-in defaults, and the values the environment and files set in their place', () => {
  const cwd = join(root, 'project')
  mkdirSync(cwd)
  writeFileSync(join(cwd, '.env'), 'A2ACLI_POLL_INTERVAL=5s\nA2ACLI_BEARER=tok-1\n', { mode: 0o600 })
  const help = helpOf({ HOME: join(root, 'home'), A2ACLI_OUTPUT: 'json', A2ACLI_STREAM: 'true' }, cwd)
  expect(help).toMatch(
    /-o, --output <format>\s+text or json \(choices: "text", "json", default: "text"\) \(now "json",\s+from env A2ACLI_OUTPUT\)/,
  )
  expect(help).toMatch(
    /--poll-interval <duration>\s+how often to ask \(default: "2s"\) \(now "5s", from\s+file \S+\.env\)/,
  )
  expect(help).toMatch(/--bearer <token>\s+a bearer token \(now \[redacted\], from file/)
  expect(help).not.toContain('tok-1')
  // --stream is the caller's choice on each call: no variable sets it, so none is shown.
  expect(help).toContain('--stream follow the stream -h')
})

it('shows the built-in default alone when nothing else sets it', () => {
  const cwd = join(root, 'bare')
  mkdirSync(cwd)
  const help = helpOf({ HOME: join(root, 'home') }, cwd)
  expect(help).toContain('--poll-interval <duration> how often to ask (default: "2s") --bearer')
  expect(help).not.toContain('(now')
})

it('adds nothing to a command that does not read configuration (a2a dev reads the project settings)', () => {
  const cwd = join(root, 'dev')
  mkdirSync(cwd)
  const help = helpOf({ HOME: join(root, 'home'), A2ACLI_POLL_INTERVAL: '9s' }, cwd, 'dev')
  expect(help).toContain('--poll-interval <duration> how often to look (default: "1s") -h')
})

it("shows a service parameter's keys with its values redacted, and a webhook's token redacted", () => {
  const cwd = join(root, 'secrets')
  mkdirSync(cwd)
  const env = {
    HOME: join(root, 'home'),
    A2ACLI_SVC_PARAM: 'authorization:Bearer svc-secret,x-trace:trace-secret',
    A2ACLI_WEBHOOK_TOKEN: 'hook-secret',
  }
  const help = helpOf(env, cwd)
  expect(help).toContain('(now ["authorization:[redacted]","x-trace:[redacted]"], from env A2ACLI_SVC_PARAM)')
  expect(help).toMatch(/--webhook-token <token>\s+a token for the webhook \(now \[redacted\], from env/)
  expect(help).not.toMatch(/svc-secret|trace-secret|hook-secret/)
})
