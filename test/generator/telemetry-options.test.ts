import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import prompts from 'prompts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type CliIo, run } from '../../generator/src/cli.ts'
import { resolveOptions } from '../../generator/src/options.ts'
import { renderProject } from '../../generator/src/render.ts'

/**
 * --telemetry without an install: what it writes (and what a project without it never gets), where it is refused,
 * how it is asked and remembered. The project it makes is installed, served and traced in telemetry.test.ts.
 */

const templates = fileURLToPath(new URL('../../generator/templates', import.meta.url))
const injected = prompts as unknown as { _injected?: unknown[] }

let cwd: string
let out: string[]
let err: string[]
const io = (interactive = false): CliIo => ({
  cwd,
  interactive,
  out: (text) => out.push(text),
  err: (text) => err.push(text),
})

beforeEach(() => {
  cwd = mkdtempSync(join(realpathSync(tmpdir()), 'a2a-telemetry-options-'))
  out = []
  err = []
})

afterEach(() => {
  injected._injected = undefined
  rmSync(cwd, { recursive: true, force: true })
})

const render = (answers: Parameters<typeof resolveOptions>[0]) =>
  new Map(
    renderProject(templates, resolveOptions({ dir: 'agent', ...answers }, cwd), '*').map((file) => [
      file.path,
      String(file.content),
    ]),
  )

const TELEMETRY_FILES = ['src/telemetry-sdk.ts', 'src/telemetry-settings.ts', 'src/telemetry.ts']

describe('--telemetry', () => {
  it.each(['echo', 'streaming', 'multi-turn', 'ai-sdk', 'mastra', 'langgraph'])(
    '%s: src/agent.ts imports src/telemetry.ts before anything else; OpenTelemetry in the dependencies, a README section and .env.example lines',
    (template) => {
      const files = render({ template, telemetry: true })
      for (const path of TELEMETRY_FILES) expect(files.has(path), path).toBe(true)
      expect(files.get('src/agent.ts')).toMatch(/^\/\/[^\n]*\nimport '\.\/telemetry\.ts'\n/)
      const { dependencies } = JSON.parse(files.get('package.json')!)
      expect(dependencies).toMatchObject({
        '@opentelemetry/api': '~1.9.0',
        '@opentelemetry/sdk-trace-node': '2.12.0',
        '@opentelemetry/sdk-metrics': '2.12.0',
        '@opentelemetry/sdk-logs': '0.223.0',
        '@opentelemetry/exporter-trace-otlp-proto': '0.223.0',
        '@opentelemetry/exporter-trace-otlp-http': '0.223.0',
      })
      // Only the AI SDK's own OpenTelemetry integration is added for a framework.
      expect('@ai-sdk/otel' in dependencies).toBe(template === 'ai-sdk')
      expect(files.get('README.md')).toMatch(/^## Telemetry$/m)
      expect(files.get('README.md')).toContain('OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318')
      expect(files.get('.env.example')).toMatch(/^# OTEL_EXPORTER_OTLP_ENDPOINT=/m)
      expect(files.get('.env.example')).toMatch(/^# OTEL_SERVICE_NAME=agent$/m)
    },
  )

  it('without it: no telemetry files, no OpenTelemetry dependency, src/agent.ts starts with its own imports', () => {
    for (const template of ['echo', 'ai-sdk']) {
      const files = render({ template })
      for (const path of TELEMETRY_FILES) expect(files.has(path), path).toBe(false)
      expect(files.get('package.json')).not.toContain('@opentelemetry')
      expect(files.get('package.json')).not.toContain('@ai-sdk/otel')
      expect(files.get('src/agent.ts')).toMatch(/^import /)
      expect(files.get('src/agent.ts')).not.toContain('telemetry')
      expect(files.get('README.md')).not.toContain('## Telemetry')
      expect(files.get('.env.example')).not.toContain('OTEL_')
    }
  })

  it.each(['bun', 'deno', 'workers'])('is refused with --runtime %s, in one line, writing nothing', async (runtime) => {
    const code = await run(['agent', '--yes', '--runtime', runtime, '--telemetry', '--no-install', '--no-git'], io())
    expect(code).not.toBe(0)
    expect(err).toEqual([
      `--telemetry is for Node.js projects for now (got --runtime ${runtime}): it starts OpenTelemetry's Node SDK`,
    ])
  })

  it('the command that does it again says --telemetry, and a second run with it continues the project', async () => {
    prompts.inject(['agent', 'Agent', 'Does things', 'echo', 'node', true, false, 'none', ['docker'], true, false])
    expect(await run(['--no-install', '--no-git'], io(true))).toBe(0)
    expect(injected._injected ?? []).toEqual([])
    const again = out.join('\n').split('To do this again without questions:\n  ')[1]!.trim()
    expect(again).toContain(' --telemetry ')
    expect(readFileSync(join(cwd, 'agent/src/telemetry.ts'), 'utf8')).toContain('OTEL_EXPORTER_OTLP_ENDPOINT')
    // Named again at the prompt, the directory is this project: its answers, --telemetry among them, are read back.
    out = []
    prompts.inject(['agent'])
    expect(await run(['--no-install', '--no-git'], io(true))).toBe(0)
    expect(err).toEqual([])
    expect(out.join('\n')).toMatch(/Continuing in .*agent: it holds this project from an earlier run/)
    expect(out.join('\n')).toContain(' --telemetry ')
  })

  it('no question about it for a runtime other than Node', async () => {
    prompts.inject(['agent', 'Agent', 'Does things', 'echo', 'bun', true, false, 'none', false])
    expect(await run(['--no-install', '--no-git'], io(true))).toBe(0)
    expect(injected._injected ?? []).toEqual([])
    expect(err.filter((line) => !/^Bun is not installed/.test(line))).toEqual([])
  })
})
