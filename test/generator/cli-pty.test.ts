import { type ChildProcess, spawn } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'

/**
 * The command at a real terminal: `script` gives it a pseudo-terminal, the test types into it and reads the
 * screen's bytes. Every step waits for the text it answers to appear, with deadlines a busy machine meets.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(repoRoot, 'generator/bin/create-a2a-agent.mjs')

/** A plain terminal without colour: the answers must read right without it. */
const terminalEnv: NodeJS.ProcessEnv = {
  ...process.env,
  TERM: 'dumb',
  NO_COLOR: '1',
  npm_config_user_agent: 'npm/10.8.2 node/v20.20.2 linux x64 workspaces/false',
  npm_config_offline: 'true',
  GIT_CEILING_DIRECTORIES: realpathSync(tmpdir()),
}

const STEP_MS = 30_000

let cwd: string
const running = new Set<ChildProcess>()

beforeAll(() => {
  if (!existsSync(join(repoRoot, 'generator/dist/index.js')))
    throw new Error('The generator is not built: run `npm run build` first (the bin imports dist/).')
})

beforeEach(() => {
  cwd = mkdtempSync(join(realpathSync(tmpdir()), 'a2a-pty-'))
})

afterEach(() => {
  for (const child of running) {
    // `script` leads its own process group; the command in the terminal ends with it (the terminal hangs up).
    if (child.exitCode !== null || child.signalCode !== null) continue
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      child.kill('SIGKILL')
    }
  }
  running.clear()
  rmSync(cwd, { recursive: true, force: true })
})

/** The screen's text without its control sequences (cursor moves, line clears, colours). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is what these sequences start with
const plain = (screen: string) => screen.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, '')

interface Terminal {
  /** Types the keys, as bytes into the terminal. */
  type(keys: string): void
  /** Waits until `text` appears on the screen after everything waited for so far. */
  waitFor(text: string): Promise<void>
  screen(): string
  exited: Promise<number | null>
}

function inTerminal(args: string[], env: NodeJS.ProcessEnv = terminalEnv): Terminal {
  const command = [process.execPath, bin, ...args].map((word) => `'${word.replaceAll("'", `'\\''`)}'`).join(' ')
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  })
  running.add(child)
  let screen = ''
  let seen = 0
  let exitCode: number | null | undefined
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk))
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      exitCode = code
      running.delete(child)
      resolve(code)
    }),
  )
  return {
    type: (keys) => child.stdin!.write(keys),
    screen: () => screen,
    exited,
    async waitFor(text) {
      const deadline = Date.now() + STEP_MS
      for (;;) {
        const at = screen.indexOf(text, seen)
        if (at >= 0) {
          seen = at + text.length
          return
        }
        if (exitCode !== undefined)
          throw new Error(`The command exited (${exitCode}) before showing ${JSON.stringify(text)}:\n${plain(screen)}`)
        if (Date.now() > deadline)
          throw new Error(`${JSON.stringify(text)} did not appear within ${STEP_MS} ms:\n${plain(screen)}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
  }
}

const ENTER = '\r'
const BACKSPACE = '\x7f'
const CTRL_C = '\x03'
const LEFT = '\x1b[D'

/** Every answer but the directory, so that only its prompt is asked. */
const ALL_BUT_DIR = [
  '--name',
  'Bot',
  '--description',
  'Does things',
  '--template',
  'echo',
  '--runtime',
  'node',
  '--auth',
  'none',
]
const QUIET = [
  ...ALL_BUT_DIR,
  '--streaming',
  '--no-push-notifications',
  '--no-telemetry',
  '--deploy',
  'docker',
  '--skill',
  'chat:Chat:Chats',
  '--no-install',
  '--no-git',
]

const read = (...path: string[]) => readFileSync(join(...path), 'utf8')

describe('at a terminal', () => {
  it('refuses a blank description in its prompt, takes the next answer, picks the runtime with an arrow key, and shows yes/no answers in words, without colour', {
    timeout: 120_000,
  }, async () => {
    const terminal = inTerminal(['--no-install', '--no-git'])
    await terminal.waitFor('Project directory')
    terminal.type(`weather${ENTER}`)
    await terminal.waitFor('Agent name')
    terminal.type(ENTER)
    await terminal.waitFor('What does the agent do?')
    terminal.type(`   ${ENTER}`)
    await terminal.waitFor('The description must not be empty')
    terminal.type(`${BACKSPACE.repeat(3)}Tells the weather${ENTER}`)
    await terminal.waitFor('Template')
    terminal.type(ENTER)
    // The runtime, one arrow down from Node.js: Bun.
    await terminal.waitFor('Runtime')
    await terminal.waitFor('Cloudflare Workers')
    terminal.type(`\x1b[B${ENTER}`)
    await terminal.waitFor('Stream answers (message/stream)? › (Y/n)')
    terminal.type(ENTER)
    await terminal.waitFor('Push notifications')
    terminal.type(ENTER)
    await terminal.waitFor('Authentication')
    terminal.type(ENTER)
    await terminal.waitFor("Declare the agent's skills now?")
    terminal.type(ENTER)
    expect(await terminal.exited).toBe(0)

    expect(JSON.parse(read(cwd, 'weather/package.json')).description).toBe('Tells the weather')
    expect(JSON.parse(read(cwd, 'weather/package.json')).scripts.start).toBe('bun src/server.ts')
    const screen = plain(terminal.screen())
    expect(screen).toContain('Stream answers (message/stream)? … yes')
    expect(screen).toContain('Push notifications (task updates POSTed to client webhooks)? … no')
    // No colour at all on a dumb terminal: the choices read by their words and marks alone.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts a colour sequence
    expect(terminal.screen()).not.toMatch(/\x1b\[[0-9;]*m/)
  })

  it('offers another directory when the one named is not empty, and leaves that one as it was', {
    timeout: 120_000,
  }, async () => {
    mkdirSync(join(cwd, 'busy'))
    writeFileSync(join(cwd, 'busy/notes.txt'), 'my notes\n')
    const terminal = inTerminal(['--no-install', '--no-git'])
    await terminal.waitFor('Project directory')
    terminal.type(`busy${ENTER}`)
    await terminal.waitFor('busy is not empty (notes.txt)')
    await terminal.waitFor('❯   Choose another directory')
    await terminal.waitFor('Write the project beside these files')
    await terminal.waitFor('Cancel')
    terminal.type(ENTER)
    await terminal.waitFor('Project directory')
    terminal.type(`fresh${ENTER}`)
    for (const question of [
      'Agent name',
      'What does the agent do?',
      'Template',
      'Runtime',
      'Stream answers',
      'Push notifications',
      'Authentication',
      'Deploy to',
      'OpenTelemetry',
      "Declare the agent's skills now?",
    ]) {
      await terminal.waitFor(question)
      terminal.type(ENTER)
    }
    expect(await terminal.exited).toBe(0)
    expect(readdirSync(join(cwd, 'busy'))).toEqual(['notes.txt'])
    expect(JSON.parse(read(cwd, 'fresh/package.json')).name).toBe('fresh')
  })

  it('takes emoji typed at the directory prompt whole: typed, erased with Backspace, passed with the arrow keys', {
    timeout: 120_000,
  }, async () => {
    const terminal = inTerminal(QUIET)
    await terminal.waitFor('Project directory')
    // Each key on its own, as a person types: 🐙 erased, then the cursor moved back over b, o, t and 🤖.
    for (const key of ['🤖', '🐙', BACKSPACE, 'b', 'o', 't', LEFT, LEFT, LEFT, LEFT, 'm', 'y']) {
      terminal.type(key)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await terminal.waitFor('my🤖bot')
    terminal.type(ENTER)
    expect(await terminal.exited).toBe(0)
    expect(readdirSync(cwd)).toEqual(['my🤖bot'])
    expect(plain(terminal.screen())).not.toContain('\uFFFD')
  })

  it('Ctrl-C at a prompt exits 130 with one line, writing nothing', { timeout: 120_000 }, async () => {
    const terminal = inTerminal(['--no-install', '--no-git'])
    await terminal.waitFor('Project directory')
    terminal.type(`weather${ENTER}`)
    await terminal.waitFor('Agent name')
    terminal.type(CTRL_C)
    await terminal.waitFor('Cancelled: nothing was written.')
    expect(await terminal.exited).toBe(130)
    expect(plain(terminal.screen())).not.toMatch(/\n\s+at /)
    expect(readdirSync(cwd)).toEqual([])
  })

  it('says at once, after the directory question, that a used project is not empty, asking nothing else', {
    timeout: 120_000,
  }, async () => {
    const first = inTerminal(['weather', '--yes', '--no-install', '--no-git'])
    expect(await first.exited).toBe(0)
    // What `a2a dev` leaves in a project that has been run.
    mkdirSync(join(cwd, 'weather/.a2a'))
    writeFileSync(join(cwd, 'weather/.a2a/dev.json'), '{}\n')
    const terminal = inTerminal(['--no-install', '--no-git'])
    await terminal.waitFor('Project directory')
    terminal.type(`weather${ENTER}`)
    await terminal.waitFor('weather is not empty (.a2a, .dockerignore, .env.example and 7 more)')
    await terminal.waitFor('Choose another directory')
    await terminal.waitFor('Cancel')
    terminal.type(`\x1b[B${ENTER}`)
    expect(await terminal.exited).toBe(1)
    const screen = plain(terminal.screen())
    expect(screen).not.toContain('Agent name')
    // Its package.json would be in the way of the project's own: writing beside it is not offered.
    expect(screen).not.toContain('Write the project beside')
  })

  it('Ctrl-C during install says how to finish and exits 130, without a stack', { timeout: 120_000 }, async () => {
    // A pnpm that says it started, then waits as a slow install does.
    const fakeBin = join(cwd, 'fake-bin')
    mkdirSync(fakeBin)
    writeFileSync(join(fakeBin, 'pnpm'), '#!/bin/sh\necho "installing (fake)"\nexec sleep 300\n')
    chmodSync(join(fakeBin, 'pnpm'), 0o755)
    const terminal = inTerminal(['agent', '--yes', '--no-git', '--pm', 'pnpm'], {
      ...terminalEnv,
      PATH: `${fakeBin}${delimiter}${terminalEnv.PATH ?? ''}`,
    })
    await terminal.waitFor('installing (fake)')
    terminal.type(CTRL_C)
    await terminal.waitFor('Installing was interrupted')
    expect(await terminal.exited).toBe(130)
    const screen = plain(terminal.screen())
    expect(screen).toContain('cd agent && pnpm install')
    expect(screen).not.toMatch(/\n\s+at /)
    expect(existsSync(join(cwd, 'agent/src/agent.ts'))).toBe(true)
  })
})
