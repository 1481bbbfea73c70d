import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import {
  closeSync,
  constants,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { createServer as createHttpServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type CommandResult, freePort, runA2a } from '../_support.ts'

const runtimeDir = fileURLToPath(new URL('../../runtime', import.meta.url))
const a2aBin = join(runtimeDir, 'bin/a2a.mjs')

/** The environment without anything that would change which card or address the CLI sees. */
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_)/.test(key)),
) as Record<string, string>

const agentSource = (card: string) => `import { defineAgent } from 'a2a-runtime'

export default defineAgent({
  card: ${card},
  execute(ctx, task) {
    task.artifact(\`Weather in \${ctx.text}: sunny\`)
    task.complete()
  },
})
`

const GOOD_PROJECT_CARD = `{
    name: 'Weather Fixture',
    description: 'Tells the weather for any city, for card validation tests',
    skills: [{ id: 'forecast', name: 'Forecast', description: 'The forecast for a city', tags: ['weather'], examples: ['Weather in Oslo?'] }],
  }`

type Card = { [field: string]: unknown; capabilities: Record<string, unknown>; skills: Array<Record<string, unknown>> }

/** A card file the checker has nothing to say about; each fixture below breaks exactly one thing in it. */
const goodCard = (): Card => ({
  name: 'Weather',
  description: 'Tells the weather for any city in the world',
  url: 'https://agents.example.com/weather/',
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'forecast',
      name: 'Forecast',
      description: 'The forecast for a city',
      tags: ['weather'],
      examples: ['Weather in Oslo?'],
    },
  ],
})
const skill = (overrides: Record<string, unknown>) => ({ ...goodCard().skills[0], ...overrides })
/** The reference card in the pure A2A v1.0 shape: no top-level url, the address in supportedInterfaces only. */
const goodV1Card = (): Card => {
  const { url, ...card } = goodCard()
  return { ...card, supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] }
}
const v1Interface = (overrides: Record<string, unknown>) => ({
  ...(goodV1Card().supportedInterfaces as object[])[0],
  ...overrides,
})

const temporaryDirs: string[] = []
const children = new Set<ChildProcess>()
const servers = new Set<Server>()

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  temporaryDirs.push(dir)
  return dir
}

/** A project as a user has it: the agent in TypeScript at src/agent.ts and a2a-runtime in node_modules. */
function makeProject(card: string): string {
  const project = tempDir('a2a-card-')
  mkdirSync(join(project, 'src'))
  mkdirSync(join(project, 'node_modules'))
  symlinkSync(runtimeDir, join(project, 'node_modules/a2a-runtime'), 'dir')
  writeFileSync(join(project, 'src/agent.ts'), agentSource(card))
  return project
}

let goodProject: string
let files: string

beforeAll(() => {
  goodProject = makeProject(GOOD_PROJECT_CARD)
  files = tempDir('a2a-card-files-')
})

afterEach(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
  children.clear()
  await Promise.all([...servers].map((server) => new Promise((resolve) => server.close(resolve))))
  servers.clear()
})

afterAll(() => {
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true })
})

/** Runs `a2a card validate ...` to its end (killed by PID past 10 s). */
const validate = (args: string[], cwd = files): Promise<CommandResult> =>
  runA2a(['card', 'validate', ...args], { cwd, env: cleanEnv, running: children })

interface Finding {
  level: 'error' | 'warning'
  path: string
  message: string
  hint: string
}

async function validateJson(
  args: string[],
  cwd?: string,
): Promise<CommandResult & { report: { source: string; findings: Finding[] } }> {
  const result = await validate([...args, '--json'], cwd)
  return { ...result, report: JSON.parse(result.stdout) }
}

/** `a2a start` in the good project on 127.0.0.1 and a free port, once it listens; `stop` ends it by its PID. */
async function startGoodAgent(): Promise<{ port: number; stop(): Promise<void> }> {
  const port = await freePort()
  const server = spawn(process.execPath, [a2aBin, 'start'], {
    cwd: goodProject,
    env: { ...cleanEnv, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(server)
  let output = ''
  server.stdout!.on('data', (chunk) => (output += chunk))
  server.stderr!.on('data', (chunk) => (output += chunk))
  await expect.poll(() => output, { timeout: 8000 }).toContain('listening on')
  const stop = async () => {
    const exited = new Promise((resolve) => server.once('exit', resolve))
    process.kill(server.pid!, 'SIGTERM')
    await exited
    children.delete(server)
  }
  return { port, stop }
}

let fileCount = 0
function cardFile(content: unknown): string {
  const path = join(files, `card-${++fileCount}.json`)
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2))
  return path
}

/** A tiny card host on 127.0.0.1: `routes` maps a path to the JSON it serves; anything else is 404. */
async function cardHost(routes: Record<string, unknown>): Promise<string> {
  const server = createHttpServer((request, response) => {
    const body = routes[request.url ?? '']
    if (body === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      return
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  })
  servers.add(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`
}

/**
 * Runs `command args` with `input` written to a pipe (the command's stdin, unless `pipeTo` names a FIFO to
 * write it to instead), to its end; killed by PID past 10 s.
 */
function runWithInput(command: string, args: string[], input: string, pipeTo?: string): Promise<CommandResult> {
  const child = spawn(command, args, { cwd: files, env: cleanEnv, stdio: ['pipe', 'pipe', 'pipe'] })
  children.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk) => (stdout += chunk))
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  // A command that stops reading at its limit closes the pipe on the rest: not an error here.
  const sink = pipeTo ? createWriteStream(pipeTo) : child.stdin!
  sink.on('error', () => {})
  sink.end(input)
  if (pipeTo) child.stdin!.end()
  const timer = setTimeout(() => process.kill(child.pid!, 'SIGKILL'), 10_000)
  let opened = false
  sink.once('open', () => (opened = true))
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer)
      children.delete(child)
      // A command that ended without opening the FIFO would leave our writer's open blocked for good: open
      // the reading end once, so it completes (and fails on the write, which is ignored).
      if (pipeTo && !opened) closeSync(openSync(pipeTo, constants.O_RDONLY | constants.O_NONBLOCK))
      resolve({ code, stdout, stderr })
    }),
  )
}

const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at /)

describe('a2a card validate', () => {
  describe("the project's card (no argument)", () => {
    it('reports a good card as valid, with no error or warning, and exits 0', async () => {
      const { code, stdout, stderr } = await validate([], goodProject)
      expect(stderr).toBe('')
      expect(code).toBe(0)
      expect(stdout.trimEnd()).toMatch(/valid$/)
      expect(stdout).toContain('src/agent.ts (as served): valid')
      expect(stdout).not.toMatch(/error/i)
      expect(stdout).not.toMatch(/warning/i)
    })

    it('checks the card as served (defaults filled in), so the JSON report has no findings', async () => {
      const { code, report } = await validateJson([], goodProject)
      expect(code).toBe(0)
      expect(report).toEqual({ source: 'src/agent.ts (as served)', findings: [] })
    })

    it('given the agent module as its argument, checks the card that module serves', async () => {
      const { code, stdout } = await validate(['src/agent.ts'], goodProject)
      expect(stdout.trimEnd()).toBe('src/agent.ts (as served): valid')
      expect(code).toBe(0)
    })

    it('outside a project names the flag that takes another module', async () => {
      const { code, stdout, stderr } = await validate([], files)
      expect(code).toBe(1)
      expect(stdout).toBe('')
      expect(stderr).toBe(`a2a: Cannot find the agent module src/agent.ts in ${files} (pass --entry <module>)\n`)
    })

    it('refuses duplicate skill ids, naming skills[1].id, and exits 1', async () => {
      const project = makeProject(`{
    name: 'Dup Fixture',
    description: 'Declares the same skill twice, which the runtime refuses',
    skills: [
      { id: 'forecast', name: 'Forecast', description: 'One', tags: ['weather'], examples: ['a'] },
      { id: 'forecast', name: 'Forecast again', description: 'Two', tags: ['weather'], examples: ['b'] },
    ],
  }`)
      const text = await validate([], project)
      expect(text.code).toBe(1)
      expect(text.stdout).toMatch(/^error\s+skills\[1\]\.id: .*forecast/m)
      expect(text.stdout.trimEnd()).toMatch(/1 error\(s\)$/)
      noStack(text.stdout + text.stderr)

      const { code, report } = await validateJson([], project)
      expect(code).toBe(1)
      expect(report.findings.map((f) => [f.level, f.path])).toEqual([['error', 'skills[1].id']])
    })

    it('refuses an authentication scheme the runtime does not validate, naming authentication.schemes, and exits 1', async () => {
      const project = makeProject(`{
    name: 'OAuth Fixture',
    description: 'Declares an authentication scheme the runtime cannot check',
    skills: [{ id: 'forecast', name: 'Forecast', description: 'One', tags: ['weather'], examples: ['a'] }],
    authentication: { schemes: ['oauth2'] },
  }`)
      const text = await validate([], project)
      expect(text.code).toBe(1)
      expect(text.stdout).toMatch(/^error\s+authentication\.schemes(\[0\])?: .*oauth2/m)
      noStack(text.stdout + text.stderr)

      const { code, report } = await validateJson([], project)
      expect(code).toBe(1)
      expect(report.findings).toHaveLength(1)
      expect(report.findings[0]!.level).toBe('error')
      expect(report.findings[0]!.path).toMatch(/^authentication\.schemes(\[0\])?$/)
    })
  })

  describe('a card file', () => {
    it('finds nothing in the reference card (the base of every fixture below) and exits 0', async () => {
      const path = cardFile(goodCard())
      const { code, report } = await validateJson([path])
      expect(code).toBe(0)
      expect(report).toEqual({ source: path, findings: [] })
    })

    const errors: Array<[string, (card: Card) => void, string]> = [
      ['a missing name', (card) => delete card.name, 'name'],
      ['an empty description', (card) => (card.description = ''), 'description'],
      ['a url that is not absolute', (card) => (card.url = 'weather/'), 'url'],
      ['version "one"', (card) => (card.version = 'one'), 'version'],
      [
        'capabilities.streaming "yes"',
        (card) => (card.capabilities = { ...card.capabilities, streaming: 'yes' }),
        'capabilities.streaming',
      ],
      ['defaultInputModes ["text"]', (card) => (card.defaultInputModes = ['text']), 'defaultInputModes[0]'],
      [
        'skills that are not an array',
        (card) => (card.skills = { forecast: card.skills[0] } as unknown as Card['skills']),
        'skills',
      ],
      ['a duplicate skill id', (card) => card.skills.push(skill({ name: 'Forecast again' })), 'skills[1].id'],
      [
        'tags that are not an array of strings',
        (card) => (card.skills[0] = skill({ tags: ['weather', 7] })),
        'skills[0].tags',
      ],
      [
        'authentication.schemes ["oauth2"]',
        (card) => (card.authentication = { schemes: ['oauth2'] }),
        'authentication.schemes[0]',
      ],
    ]
    it.each(errors)('reports %s as one error at its exact path and exits 1', async (_problem, breakIt, path) => {
      const card = goodCard()
      breakIt(card)
      const { code, report } = await validateJson([cardFile(card)])
      expect(report.findings.map((f) => [f.level, f.path])).toEqual([['error', path]])
      expect(code).toBe(1)
    })

    const warnings: Array<[string, (card: Card) => void, string]> = [
      ['a short description', (card) => (card.description = 'Weather'), 'description'],
      ['empty examples', (card) => (card.skills[0] = skill({ examples: [] })), 'skills[0].examples'],
      ['missing examples', (card) => (card.skills[0] = skill({ examples: undefined })), 'skills[0].examples'],
      ['empty tags', (card) => (card.skills[0] = skill({ tags: [] })), 'skills[0].tags'],
      ['no skills', (card) => (card.skills = []), 'skills'],
    ]
    it.each(warnings)('warns about %s at its exact path and still exits 0', async (_problem, weaken, path) => {
      const card = goodCard()
      weaken(card)
      const { code, report } = await validateJson([cardFile(card)])
      expect(report.findings.map((f) => [f.level, f.path])).toEqual([['warning', path]])
      expect(code).toBe(0)
    })

    it('finds nothing in a pure A2A v1.0 card (supportedInterfaces, no top-level url) and exits 0', async () => {
      const path = cardFile(goodV1Card())
      const { code, report } = await validateJson([path])
      expect(report).toEqual({ source: path, findings: [] })
      expect(code).toBe(0)
    })

    const v1Errors: Array<[string, (card: Card) => void, string]> = [
      ['no interface', (card) => (card.supportedInterfaces = []), 'supportedInterfaces'],
      [
        'supportedInterfaces that are not an array',
        (card) => (card.supportedInterfaces = v1Interface({})),
        'supportedInterfaces',
      ],
      [
        'an interface without url',
        (card) => (card.supportedInterfaces = [v1Interface({ url: undefined })]),
        'supportedInterfaces[0].url',
      ],
      [
        'an interface url that is not absolute',
        (card) => (card.supportedInterfaces = [v1Interface({ url: 'weather/' })]),
        'supportedInterfaces[0].url',
      ],
      [
        'an interface without protocolBinding',
        (card) => (card.supportedInterfaces = [v1Interface({ protocolBinding: undefined })]),
        'supportedInterfaces[0].protocolBinding',
      ],
      [
        'an interface that is not an object',
        (card) => (card.supportedInterfaces = [v1Interface({}), 'JSONRPC']),
        'supportedInterfaces[1]',
      ],
    ]
    it.each(v1Errors)(
      'reports %s in a v1.0 card as one error at its exact path and exits 1',
      async (_problem, breakIt, path) => {
        const card = goodV1Card()
        breakIt(card)
        const { code, report } = await validateJson([cardFile(card)])
        expect(report.findings.map((f) => [f.level, f.path])).toEqual([['error', path]])
        expect(code).toBe(1)
      },
    )

    it('warns about a v1.0 interface without protocolVersion, and still asks a card with neither url nor interfaces for its url', async () => {
      const unversioned = goodV1Card()
      unversioned.supportedInterfaces = [v1Interface({ protocolVersion: undefined })]
      const warned = await validateJson([cardFile(unversioned)])
      expect(warned.report.findings.map((f) => [f.level, f.path])).toEqual([
        ['warning', 'supportedInterfaces[0].protocolVersion'],
      ])
      expect(warned.code).toBe(0)

      const { supportedInterfaces: _, ...neither } = goodV1Card()
      const refused = await validateJson([cardFile(neither)])
      expect(refused.report.findings.map((f) => [f.level, f.path])).toEqual([['error', 'url']])
      expect(refused.code).toBe(1)
    })

    it('prints a warning line and "valid, 1 warning(s)" in text mode', async () => {
      const card = goodCard()
      card.skills = []
      const path = cardFile(card)
      const { code, stdout } = await validate([path])
      expect(code).toBe(0)
      expect(stdout).toMatch(/^warning skills: .+ → .+$/m)
      expect(stdout.trimEnd()).toBe(`${stdout.trimEnd().split('\n')[0]}\n${path}: valid, 1 warning(s)`)
    })

    it('with --json prints exactly one JSON object { source, findings: [{ level, path, message, hint }] }', async () => {
      const card = goodCard()
      card.version = 'one'
      card.skills = []
      const path = cardFile(card)
      const { code, stdout } = await validate([path, '--json'])
      expect(code).toBe(1)
      expect(stdout.endsWith('\n')).toBe(true)
      expect(stdout.trimEnd().split('\n')).toHaveLength(1)
      const report = JSON.parse(stdout) as { source: string; findings: Finding[] }
      expect(Object.keys(report).sort()).toEqual(['findings', 'source'])
      expect(report.source).toBe(path)
      expect(report.findings.map((f) => [f.level, f.path])).toEqual([
        ['error', 'version'],
        ['warning', 'skills'],
      ])
      for (const finding of report.findings) {
        expect(Object.keys(finding).sort()).toEqual(['hint', 'level', 'message', 'path'])
        expect(finding.message).toEqual(expect.any(String))
        expect(finding.message).not.toBe('')
        expect(finding.hint).toEqual(expect.any(String))
        expect(finding.hint).not.toBe('')
      }
    })

    it('reports a file that is not JSON as an error at $ and exits 1', async () => {
      const path = cardFile('{ "name": "Weather", ')
      const { code, report } = await validateJson([path])
      expect(code).toBe(1)
      expect(report.source).toBe(path)
      expect(report.findings.map((f) => [f.level, f.path])).toEqual([['error', '$']])
      expect(report.findings[0]!.message).toMatch(/not valid JSON/)
    })

    it('names the line and column where the JSON breaks', async () => {
      const path = cardFile('{\n  "name": "Weather",\n  "description": "Tells the weather"\n  "version": "1.0.0"\n}\n')
      const { code, report } = await validateJson([path])
      expect(code).toBe(1)
      expect(report.findings).toHaveLength(1)
      expect(report.findings[0]!.message).toMatch(/^not valid JSON at line 4, column 3: /)
      const cut = await validateJson([cardFile('{"name": "Weather"')])
      expect(cut.report.findings[0]!.message).toMatch(/^not valid JSON at line 1, column 19: /)
    })

    it('reports an empty file and a folder as one clear finding each', async () => {
      const empty = await validateJson([cardFile('  \n')])
      expect(empty.code).toBe(1)
      expect(empty.report.findings.map((f) => [f.path, f.message])).toEqual([['$', 'the card is empty']])
      const folder = join(files, 'cards')
      mkdirSync(folder, { recursive: true })
      const dir = await validateJson([folder])
      expect(dir.code).toBe(1)
      expect(dir.report.findings.map((f) => [f.path, f.message])).toEqual([
        ['$', `${folder} is a folder, not a card file`],
      ])
      expect(dir.stderr).toBe('')
    })

    it('checks a card with thousands of skills, and refuses a card of megabytes with a finding', async () => {
      const many = goodCard()
      many.skills = Array.from({ length: 4000 }, (_, i) => skill({ id: `skill-${i}` }))
      const checked = await validateJson([cardFile(many)])
      expect(checked.report.findings).toEqual([])
      expect(checked.code).toBe(0)

      const huge = goodCard()
      huge.skills = Array.from({ length: 4000 }, (_, i) => skill({ id: `skill-${i}`, description: 'x'.repeat(1000) }))
      const refused = await validateJson([cardFile(huge)])
      expect(refused.code).toBe(1)
      expect(refused.report.findings).toHaveLength(1)
      expect(refused.report.findings[0]!.message).toMatch(/^the card is \d+ bytes, over the 1 MiB this check reads$/)
    })

    it('reads a card piped to /dev/stdin, and refuses a piped card over 1 MiB with the finding', async () => {
      const piped = await runWithInput(
        process.execPath,
        [a2aBin, 'card', 'validate', '/dev/stdin', '--json'],
        JSON.stringify(goodCard()),
      )
      noStack(piped.stderr)
      expect(JSON.parse(piped.stdout)).toEqual({ source: '/dev/stdin', findings: [] })
      expect(piped.code).toBe(0)

      const huge = goodCard()
      huge.description = 'x'.repeat(2 * 1024 * 1024)
      const refused = await runWithInput(
        process.execPath,
        [a2aBin, 'card', 'validate', '/dev/stdin', '--json'],
        JSON.stringify(huge),
      )
      noStack(refused.stderr)
      expect(JSON.parse(refused.stdout).findings.map((f: Finding) => f.message)).toEqual([
        `the card is more than ${1024 * 1024} bytes, over the 1 MiB this check reads`,
      ])
      expect(refused.code).toBe(1)
    })

    it.skipIf(!existsSync('/bin/bash'))(
      'reads a card piped to /dev/stdin by a shell (a pipe, not a socket)',
      async () => {
        const card = cardFile(goodCard())
        const { code, stdout, stderr } = await runWithInput(
          '/bin/bash',
          ['-c', 'cat "$2" | "$0" "$1" card validate /dev/stdin --json', process.execPath, a2aBin, card],
          '',
        )
        noStack(stderr)
        expect(JSON.parse(stdout)).toEqual({ source: '/dev/stdin', findings: [] })
        expect(code).toBe(0)
      },
    )

    it.skipIf(!existsSync('/usr/bin/mkfifo'))('reads a card from a FIFO', async () => {
      const fifo = join(files, `card-${++fileCount}.fifo`)
      execFileSync('mkfifo', [fifo])
      const { code, stdout, stderr } = await runWithInput(
        process.execPath,
        [a2aBin, 'card', 'validate', fifo, '--json'],
        JSON.stringify(goodCard()),
        fifo,
      )
      noStack(stderr)
      expect(JSON.parse(stdout)).toEqual({ source: fifo, findings: [] })
      expect(code).toBe(0)
    })

    it.skipIf(!existsSync('/bin/bash'))('reads a card from a process substitution, <(…)', async () => {
      const card = cardFile(goodCard())
      const { code, stdout, stderr } = await runWithInput(
        '/bin/bash',
        ['-c', 'exec "$0" "$1" card validate <(cat "$2") --json', process.execPath, a2aBin, card],
        '',
      )
      noStack(stderr)
      expect(JSON.parse(stdout).findings).toEqual([])
      expect(code).toBe(0)
    })

    it('names a path that does not exist in one line, without a stack trace, and exits 1', async () => {
      const path = join(files, 'nowhere/agent.json')
      const { code, stdout, stderr } = await validate([path])
      expect(code).toBe(1)
      expect(stdout).toBe('')
      expect(stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(stderr).toContain(path)
      noStack(stderr)
    })
  })

  describe("a running agent's URL", () => {
    it('validates the card `a2a start` serves and exits 0', async () => {
      const { port, stop } = await startGoodAgent()

      const url = `http://127.0.0.1:${port}/`
      const { code, stdout, stderr } = await validate([url])
      expect(stderr).toBe('')
      expect(stdout.trimEnd()).toBe(`${url}.well-known/agent.json: valid`)
      expect(code).toBe(0)

      await stop()
    })

    it('fetches a URL that already names a card path as given (the card URL `a2a dev` prints), not with the path appended again', async () => {
      const { port, stop } = await startGoodAgent()

      for (const path of ['.well-known/agent.json', '.well-known/agent-card.json']) {
        const url = `http://127.0.0.1:${port}/${path}`
        const { code, stdout, stderr } = await validate([url])
        expect(stderr).toBe('')
        expect(stdout.trimEnd()).toBe(`${url}: valid`)
        expect(code).toBe(0)
      }
      // --live probes the agent the card belongs to, at its base URL.
      const live = await validate([`http://127.0.0.1:${port}/.well-known/agent.json`, '--live'])
      expect(live.stdout.trimEnd()).toBe(`http://127.0.0.1:${port}/.well-known/agent.json: valid`)
      expect(live.code).toBe(0)
      await stop()

      // With a trailing slash or a query, still that very URL: the host below answers only at these exact paths.
      const exact = await cardHost({
        '/agents/x/.well-known/agent.json/': goodCard(),
        '/.well-known/agent-card.json?v=1': goodCard(),
      })
      for (const url of [`${exact}/agents/x/.well-known/agent.json/`, `${exact}/.well-known/agent-card.json?v=1`]) {
        const { code, report } = await validateJson([url])
        expect(report).toEqual({ source: url, findings: [] })
        expect(code).toBe(0)
      }

      // A card URL that answers 404 is reported as that URL, not tried under other paths.
      const empty = await cardHost({})
      const missing = await validateJson([`${empty}/.well-known/agent.json`])
      expect(missing.code).toBe(1)
      expect(missing.report.findings.map((f) => [f.level, f.path, f.message])).toEqual([
        ['error', '$', `no card: ${empty}/.well-known/agent.json answered HTTP 404`],
      ])
    })

    it('validates clean the v1.0 card the runtime serves (A2A-Version: 1.0), as served and without its v0.3 addressing fields', async () => {
      const { port, stop } = await startGoodAgent()
      const response = await fetch(`http://127.0.0.1:${port}/.well-known/agent-card.json`, {
        headers: { 'A2A-Version': '1.0' },
      })
      const served = (await response.json()) as Record<string, unknown>
      expect((served.supportedInterfaces as Array<{ protocolVersion: string }>)[0]!.protocolVersion).toBe('1.0')
      await stop()

      const { url: _url, preferredTransport: _preferred, additionalInterfaces: _additional, ...pure } = served
      const origin = await cardHost({ '/.well-known/agent-card.json': served, '/v1/.well-known/agent-card.json': pure })
      for (const url of [`${origin}/.well-known/agent-card.json`, `${origin}/v1/.well-known/agent-card.json`]) {
        const { code, report } = await validateJson([url])
        expect(report).toEqual({ source: url, findings: [] })
        expect(code).toBe(0)
      }
    })

    it('falls back to /.well-known/agent-card.json when agent.json is 404, and names that URL as the source', async () => {
      const origin = await cardHost({ '/.well-known/agent-card.json': goodCard() })
      const { code, report } = await validateJson([`${origin}/`])
      expect(report).toEqual({ source: `${origin}/.well-known/agent-card.json`, findings: [] })
      expect(code).toBe(0)

      const text = await validate([`${origin}/`])
      expect(text.code).toBe(0)
      expect(text.stdout.trimEnd()).toBe(`${origin}/.well-known/agent-card.json: valid`)
    })

    it('reports no card when both well-known paths answer 404, and exits 1', async () => {
      const origin = await cardHost({})
      const { code, report } = await validateJson([`${origin}/`])
      expect(code).toBe(1)
      expect(report.findings.map((f) => [f.level, f.path])).toEqual([['error', '$']])
      expect(report.findings[0]!.message).toContain('/.well-known/agent.json answered HTTP 404')
      expect(report.findings[0]!.message).toContain('/.well-known/agent-card.json answered HTTP 404')
    })

    it('reads at most 1 MiB of a served card: an endless one gets a finding, not a hang', async () => {
      const server = createHttpServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.write('{"name": "Endless", "description": "')
        const chunk = 'x'.repeat(64 * 1024)
        const more = () => {
          while (!response.destroyed && response.write(chunk));
          if (!response.destroyed) response.once('drain', more)
        }
        more()
      })
      servers.add(server)
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`
      const { code, report } = await validateJson([`${origin}/`])
      expect(code).toBe(1)
      expect(report.findings.map((f) => f.message)).toEqual([
        `the card is more than ${1024 * 1024} bytes, over the 1 MiB this check reads`,
      ])
      server.closeAllConnections()
    })

    it('says "Cannot reach" in one line for a port nobody listens on, and exits 1', async () => {
      const port = await freePort()
      const { code, stdout, stderr } = await validate([`http://127.0.0.1:${port}/`])
      expect(code).toBe(1)
      expect(stdout).toBe('')
      expect(stderr).toContain(`Cannot reach http://127.0.0.1:${port}/.well-known/agent.json`)
      expect(stderr.trimEnd().split('\n')).toHaveLength(1)
      noStack(stderr)
    })
  })

  // defineAgent (what `a2a start` serves) and this check read one set of card rules: what the check calls an error
  // in a served card, the runtime refuses in the card as defined, at the same path. They disagreed until they shared
  // it: the runtime started with each card below, whose served card the check then failed (or, for capabilities
  // that are no object, served the defaults in silence).
  describe('one set of rules with the runtime', () => {
    const refused: Array<[string, string, (card: Card) => void, string]> = [
      ['an empty description', "description: ''", (card) => (card.description = ''), 'description'],
      [
        'a skill with a blank name',
        "skills: [{ id: 'a', name: ' ', description: 'One', tags: ['x'] }]",
        (card) => (card.skills[0] = skill({ name: ' ' })),
        'skills[0].name',
      ],
      [
        'tags that are not all strings',
        "skills: [{ id: 'a', name: 'A', description: 'One', tags: ['x', 7] }]",
        (card) => (card.skills[0] = skill({ tags: ['x', 7] })),
        'skills[0].tags',
      ],
      [
        'a default input mode that is no media type',
        "defaultInputModes: ['text']",
        (card) => (card.defaultInputModes = ['text']),
        'defaultInputModes[0]',
      ],
      [
        'capabilities that are no object',
        "capabilities: 'yes'",
        (card) => (card.capabilities = 'yes' as unknown as Card['capabilities']),
        'capabilities',
      ],
      [
        'an unknown authentication scheme',
        "authentication: { schemes: ['bearer', 'oauth2'] }",
        (card) => (card.authentication = { schemes: ['bearer', 'oauth2'] }),
        'authentication.schemes[1]',
      ],
    ]
    it.each(refused)(
      'the runtime refuses %s where the check of a served card finds its error',
      async (_problem, field, breakIt, path) => {
        const project = makeProject(
          `{ name: 'Rules Fixture', description: 'Breaks one card rule at a time, for the tests', ${field} }`,
        )
        const served = goodCard()
        breakIt(served)
        const [asDefined, asServed] = await Promise.all([validateJson([], project), validateJson([cardFile(served)])])
        expect(asDefined.report.findings).toEqual([
          { level: 'error', path, message: expect.any(String), hint: 'the runtime refuses to start with this card' },
        ])
        expect(asDefined.code).toBe(1)
        expect(asServed.report.findings.map((f) => [f.level, f.path])).toEqual([['error', path]])
        expect(asServed.code).toBe(1)
      },
    )

    it('a2a start refuses such a card in one line naming the field, instead of serving it', async () => {
      const project = makeProject(`{ name: 'Rules Fixture', description: '' }`)
      const port = await freePort()
      const started = await runA2a(['start'], {
        cwd: project,
        env: { ...cleanEnv, PORT: String(port), HOST: '127.0.0.1' },
        running: children,
      })
      expect(started.code).toBe(1)
      expect(started.stdout + started.stderr).toContain('a2a: Agent card: `description` must be a non-empty string\n')
      noStack(started.stdout + started.stderr)
    })

    it('the check takes the media range */* in the default modes, as the runtime serves and honours it', async () => {
      const card = goodCard()
      card.defaultInputModes = ['*/*']
      const path = cardFile(card)
      const project = makeProject(`{
    name: 'Anything Fixture',
    description: 'Takes a message of any media type, for the tests',
    defaultInputModes: ['*/*'],
    skills: [{ id: 'any', name: 'Any', description: 'Takes anything', tags: ['any'], examples: ['a'] }],
  }`)
      const [file, asServed] = await Promise.all([validateJson([path]), validateJson([], project)])
      expect(file.report).toEqual({ source: path, findings: [] })
      expect(file.code).toBe(0)
      expect(asServed.report.findings).toEqual([])
      expect(asServed.code).toBe(0)
    })
  })
})
