import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createA2AApp, createMemoryStore, defineAgent, serveAgent } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import { SETTINGS, settingsTable } from '../../runtime/src/settings.ts'
import { userMessage } from './_messages.ts'

// Every environment variable the runtime reads is in one list (runtime/src/settings.ts), which the runtime README
// shows as its table; settings are read from an `env` that the caller may give (a Worker has no process.env), and
// a bad value is one ConfigurationError naming the option, the variable and what it got.

const runtimeSrc = fileURLToPath(new URL('../../runtime/src', import.meta.url))
const readme = readFileSync(fileURLToPath(new URL('../../runtime/README.md', import.meta.url)), 'utf8')

function sources(dir: string): Array<{ path: string; text: string }> {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') ? [{ path: relative(runtimeSrc, path), text: readFileSync(path, 'utf8') }] : []
  })
}

const agent = defineAgent({
  card: { name: 'Settings', description: 'Answers with its dialect', version: '1.0.0' },
  execute: (_ctx, task) => {
    task.artifact('done')
    task.complete()
  },
})

const send = (app: ReturnType<typeof createA2AApp>) =>
  app.fetch(
    new Request('http://localhost/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: userMessage('hi') }),
    }),
  )

describe('settings, in one place', () => {
  it("the runtime README's table of environment variables is the list the runtime reads from", () => {
    expect(readme).toContain(`\n${settingsTable()}\n`)
  })

  it('names every variable the runtime reads, and reads every variable it names', () => {
    const listed = new Set<string>(SETTINGS.map((setting) => setting.variable))
    const files = sources(runtimeSrc).filter(({ path }) => path !== 'settings.ts')
    const named = new Set(
      files.flatMap(({ text }) =>
        [...text.matchAll(/['"`](A2A_[A-Z0-9_]+|PORT|HOST)['"`]/g)].map((match) => match[1]!),
      ),
    )
    expect([...named].filter((variable) => !listed.has(variable))).toEqual([])
    expect([...listed].filter((variable) => !named.has(variable))).toEqual([])
  })

  it('reads the environment only through the settings module (the CLI hands it process.env, loaded with .env)', () => {
    const readers = sources(runtimeSrc)
      .filter(
        ({ path, text }) =>
          /process\.env\b(?!\s*[,)])/.test(text.replace(/^\s*(\*|\/\/).*$/gm, '')) && path !== 'settings.ts',
      )
      .map(({ path }) => path)
    // _env.ts is the one that loads the project's .env into process.env; config/_resolve.ts reads the a2a client
    // commands' own settings (A2ACLI_*, the environment and their .env files), which are not the agent's.
    expect(readers).toEqual([join('cli', '_env.ts'), join('cli', 'config', '_resolve.ts')])
  })

  it('takes settings from the env given, not from the process', async () => {
    const previous = process.env.A2A_DIALECT
    process.env.A2A_DIALECT = 'platform'
    try {
      const app = createA2AApp(agent, { env: { A2A_DIALECT: 'a2a-0.3' }, logger: silent })
      // v0.3 answers message/send with the task's `kind`; the platform dialect has none.
      const answer = (await (await send(app)).json()) as { result: { kind?: string } }
      expect(answer.result.kind).toBe('task')
      await app.close()
    } finally {
      if (previous === undefined) delete process.env.A2A_DIALECT
      else process.env.A2A_DIALECT = previous
    }
  })

  it.each([
    [{ A2A_DIALECT: 'a2a-2.0' }, 'dialect (A2A_DIALECT) must be "platform" or "a2a-0.3" (got "a2a-2.0")'],
    [
      { A2A_MAX_TASK_BYTES: 'lots' },
      'maxTaskBytes (A2A_MAX_TASK_BYTES) must be a whole number of bytes, at least 1 (got "lots")',
    ],
    [
      { A2A_SSE_HEARTBEAT_MS: '-5' },
      'sseHeartbeatMs (A2A_SSE_HEARTBEAT_MS) must be a whole number of ms from 0 (0: none) (got "-5")',
    ],
    [
      { A2A_STORE_MAX_BYTES: '0' },
      'maxBytes (A2A_STORE_MAX_BYTES) must be a whole number of bytes from 1 to 9007199254740991 (got "0")',
    ],
    [{ A2A_LOG_LEVEL: 'loud' }, 'A2A_LOG_LEVEL must be one of debug, info, warn, error, silent (got "loud")'],
  ])('refuses %o with a ConfigurationError naming the option, the variable and the value', (env, message) => {
    expect(() => createA2AApp(agent, { env, ...(!('A2A_LOG_LEVEL' in env) && { logger: silent }) })).toThrow(
      new ConfigurationError(message),
    )
  })

  it('serveAgent reads PORT, HOST and its connection settings from the env given', async () => {
    await expect(serveAgent(agent, { env: { PORT: '70000' }, logger: silent, handleSignals: false })).rejects.toThrow(
      'The port must be an integer from 0 to 65535 (got 70000)',
    )
    await expect(
      serveAgent(agent, { env: { A2A_MAX_CONNECTIONS: '0' }, logger: silent, handleSignals: false }),
    ).rejects.toThrow('maxConnections (A2A_MAX_CONNECTIONS) must be a whole number from 1 (got "0")')
  })

  it('the stores take their budgets from the env given, and refuse a bad option with the same error', () => {
    expect(createMemoryStore({ env: { A2A_STORE_MAX_BYTES: '4096' } }).maxBytes).toBe(4096)
    expect(() => createMemoryStore({ maxTasks: 0 })).toThrow(ConfigurationError)
  })
})

const silent = { debug() {}, info() {}, warn() {}, error() {} }
