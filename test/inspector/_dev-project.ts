import { type ChildProcess, execFile, spawn } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { rpc } from '../_rpc.ts'
import { SLOW } from '../_served-project.ts'
import { a2aBin, freePort, runtimeDir } from '../_support.ts'

/**
 * A generated project served by `a2a dev` (this repository's runtime build), for the dev inspector's tests, and
 * the agent they run in it.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const generatorBin = join(repoRoot, 'generator/bin/create-a2a-agent.mjs')
const exec = promisify(execFile)

/** The folders `generateProject` made, each holding one project; `cleanUp` removes them. */
const generated = new Set<string>()
/** The dev servers `startDev` started and nobody stopped yet; `cleanUp` stops them. */
const running = new Set<DevServer>()

/**
 * Runs the built generator (`generator/dist`; `npm test` builds first) with `--template <template>`, no install and
 * no git, into a new temporary folder, then links this repository's runtime as `node_modules/a2a-runtime`, as an
 * install would put it, so `a2a dev` there runs this repository's runtime build. Returns the project's path; the
 * card is named "Inspector Agent" until `writeAgent` replaces the agent.
 */
export async function generateProject(template = 'streaming'): Promise<string> {
  for (const built of ['generator/dist/index.js', 'runtime/dist/index.js']) {
    if (!existsSync(join(repoRoot, built)))
      throw new Error(`${built} is missing: run \`npm run build\` (npm test does) first.`)
  }
  const root = mkdtempSync(join(realpathSync(tmpdir()), 'a2a-inspector-'))
  generated.add(root)
  const { stdout } = await exec(
    process.execPath,
    [
      generatorBin,
      'inspector-agent',
      '--yes',
      '--no-install',
      '--no-git',
      '--json',
      '--pm',
      'npm',
      '--template',
      template,
    ],
    {
      cwd: root,
      timeout: 2 * SLOW,
      env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
    },
  )
  const project = (JSON.parse(stdout.trim().split('\n').at(-1)!) as { dir: string }).dir
  mkdirSync(join(project, 'node_modules'), { recursive: true })
  symlinkSync(runtimeDir, join(project, 'node_modules/a2a-runtime'), 'dir')
  return project
}

/**
 * Saves `source` as the project's `src/agent.ts` the way an editor that saves by rename does (a new file, renamed
 * over the old one), so a running `a2a dev` never reads it half written.
 */
export function writeAgent(project: string, source: string): void {
  const temporary = join(project, 'src/.agent.ts.tmp')
  writeFileSync(temporary, source)
  renameSync(temporary, join(project, 'src/agent.ts'))
}

/**
 * A file whose creation lets the gated agent's "stream" finish. Its extension is one `a2a dev` does not reload
 * on (runtime/src/dev/_watch.ts), so creating it (`writeFileSync(gate, '')`) changes nothing else; removing it
 * holds the next "stream" again.
 */
export function gateFile(project: string, name = 'release'): string {
  return join(project, `${name}.gate`)
}

/**
 * The source of an agent for driving the inspector through every state a task can show. Its card (named `name`)
 * declares streaming and push notifications, and one skill, "fixture". By the text of a message:
 * - "stream": a working status, then an artifact named "stream" in chunks: "alpha " at once, then, once `gate`
 *   exists, "omega" (appended, the last chunk), and the task completes ("alpha omega").
 * - "ask": input-required with the question "What should I answer?"; the task's next message completes it with
 *   the artifact "Answer: <its text>".
 * - "markup": a Markdown artifact holding HTML of every kind a page must not run or render.
 * - "parts": the kinds of the message's parts, its data part and its skill as a data artifact ("received"), and a
 *   file artifact "reply.txt" ("hello back").
 * - "hang": a working status, then nothing until the task is canceled (`tasks/cancel`: the agent has a `cancel`).
 * - anything else: completes with the artifact "Echo: <the text>".
 */
export function gatedAgentSource({ gate, name = 'Inspector Fixture' }: { gate: string; name?: string }): string {
  return `import { existsSync } from 'node:fs'
import { defineAgent } from 'a2a-runtime'

const gate = ${JSON.stringify(gate)}

/** Resolves after \`ms\`, or at once when the task is (or was already) canceled. */
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })

export default defineAgent({
  card: {
    name: ${JSON.stringify(name)},
    description: 'Streams, asks and hangs on request, for the dev inspector tests',
    version: '0.1.0',
    capabilities: { streaming: true, pushNotifications: true },
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'fixture', name: 'Fixture', description: 'Streams, asks, hangs or echoes', tags: ['test'], examples: ['stream', 'ask', 'hang', 'hello'] }],
  },
  async execute(ctx, task) {
    const text = ctx.text.trim()
    if (ctx.history.filter((message) => message.role === 'user').length > 1) {
      // The answer to "ask".
      task.artifact('Answer: ' + text)
      task.complete()
      return
    }
    if (text === 'stream') {
      task.working('Streaming: alpha sent, omega waits for the gate')
      const artifactId = task.artifact('alpha ', { name: 'stream' })
      while (!existsSync(gate)) {
        await pause(25, ctx.signal)
        if (ctx.signal.aborted) return // canceled: the runtime has ended the task
      }
      task.artifact('omega', { artifactId, append: true, lastChunk: true })
      task.complete()
      return
    }
    if (text === 'ask') {
      task.inputRequired('What should I answer?')
      return
    }
    if (text === 'markup') {
      // Markdown, and HTML an agent (or whatever it quotes) might send: the page must show the latter as text.
      task.artifact([
        '# Markup',
        '',
        '**bold** and a [safe link](https://example.com/) and a [bad one](javascript:alert(1)).',
        '',
        '<kbd><img/src="x"/onerror="alert(1)"></kbd> <kbd><style/x>body{display:none}</style></kbd>',
        '<kbd><form/action="https://evil.example"><button>go</button></form></kbd> <script>alert(1)</script>',
        '<a/href="javascript:alert(1)">click</a> <iframe src="data:text/html,x"></iframe> ![img](data:image/png;base64,AAAA)',
      ].join('\\n'), { name: 'markup' })
      task.complete()
      return
    }
    if (text === 'parts') {
      // What arrived, as a data part, and a file back.
      const kinds = ctx.message.parts.map((part) => part.kind === 'file' ? 'file ' + (part.file.name ?? '') : part.kind)
      const data = ctx.message.parts.find((part) => part.kind === 'data')
      task.artifact({ received: kinds, data: data?.kind === 'data' ? data.data : null, skill: ctx.message.metadata?.skillId ?? null }, { name: 'received' })
      task.artifact([{ kind: 'file', file: { name: 'reply.txt', mimeType: 'text/plain', bytes: 'aGVsbG8gYmFjaw==' } }], { name: 'file' })
      task.complete()
      return
    }
    if (text === 'hang') {
      task.working('Hanging until canceled')
      while (!ctx.signal.aborted) await pause(60_000, ctx.signal)
      return
    }
    task.artifact('Echo: ' + ctx.text)
    task.complete()
  },
  cancel: (_ctx, task) => task.cancel('Canceled on request.'),
})
`
}

export interface DevServer {
  /** The address `a2a dev` printed, e.g. `http://127.0.0.1:41234/`. */
  url: string
  /** The dev inspector: `<url>__a2a/`. */
  inspectorUrl: string
  child: ChildProcess
  /** Everything it printed so far, stdout and stderr together. */
  output(): string
  /**
   * SIGTERM by PID, then SIGKILL if it still runs 30 s later (a running task holds a dev server's exit for up to
   * 10 s); resolves once it has exited, with its exit code (null when killed by a signal). Idempotent.
   */
  stop(): Promise<number | null>
}

/**
 * `a2a dev` (this repository's `runtime/bin/a2a.mjs`) in `project` on a free port of 127.0.0.1 (`PORT`, `HOST`;
 * `env` adds to them and to this process's environment), once its card answers at the address it printed (a
 * taken port makes `a2a dev` pick another). `a2a dev` loads the agent before it listens, so the card's first
 * answer tells: 200, or 503 when the agent does not load, which fails the start at once, with the output, unless
 * `agentLoads: false` says the test means it (a broken agent is something the inspector shows). Fails with the
 * output also when the server exits first or is not serving after `SLOW`. The server is tracked until stopped,
 * so `cleanUp` in an afterAll ends it when a test fails first.
 */
export async function startDev(
  project: string,
  env: Record<string, string> = {},
  { agentLoads = true }: { agentLoads?: boolean } = {},
): Promise<DevServer> {
  const port = await freePort()
  const child = spawn(process.execPath, [a2aBin, 'dev'], {
    cwd: project,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const exitedWithin = (ms: number) =>
    Promise.race([
      exited.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref()),
    ])
  let stopping: Promise<number | null> | undefined
  const server: DevServer = {
    url: '',
    inspectorUrl: '',
    child,
    output: () => output,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          process.kill(child.pid!, 'SIGTERM')
          if (!(await exitedWithin(30_000)) && child.exitCode === null && child.signalCode === null)
            process.kill(child.pid!, 'SIGKILL')
        }
        const code = await exited
        running.delete(server)
        return code
      })()
      return stopping
    },
  }
  running.add(server)

  const deadline = Date.now() + SLOW
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await server.stop()
      throw new Error(`a2a dev exited with ${child.exitCode ?? child.signalCode}:\n${output}`)
    }
    if (Date.now() > deadline) {
      await server.stop()
      throw new Error(`a2a dev did not serve its card within ${SLOW / 1000} s:\n${output}`)
    }
    const url = /Dev server at (http:\/\/\S+\/)/.exec(output)?.[1]
    const status =
      url &&
      (await fetch(`${url}.well-known/agent.json`).then(
        (response) => response.status,
        () => undefined,
      ))
    if (url && status) {
      if (status !== 200 && (agentLoads || status !== 503)) {
        await server.stop()
        throw new Error(
          `a2a dev answered its card with HTTP ${status}${agentLoads ? ' (the agent did not load?)' : ''}:\n${output}`,
        )
      }
      server.url = url
      server.inspectorUrl = `${url}__a2a/`
      return server
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** For an afterAll: stops every dev server still running and removes every generated project. */
export async function cleanUp(): Promise<void> {
  await Promise.all([...running].map((server) => server.stop()))
  for (const root of generated) rmSync(root, { recursive: true, force: true })
  generated.clear()
}

interface JsonRpcAnswer {
  status: number
  body: { result?: any; error?: { code: number; message: string; data?: unknown } }
}

/**
 * A platform-dialect JSON-RPC call to the agent at `url`: `method` with `params`, the HTTP status and the answer.
 */
async function call(url: string, method: string, params: unknown): Promise<JsonRpcAnswer> {
  const { status, body } = await rpc(url, method, params)
  return { status, body }
}

/** A user message of `text`; `taskId` makes it the next turn of that task. */
function userMessage(text: string, taskId?: string): Record<string, unknown> {
  return {
    role: 'user',
    messageId: `m-${Math.random().toString(36).slice(2)}`,
    parts: [{ kind: 'text', text }],
    ...(taskId && { taskId }),
  }
}

/** `message/send` of `text` (non-blocking with `{ configuration: { blocking: false } }` in `extra`). */
export function sendMessage(url: string, text: string, extra: Record<string, unknown> = {}): Promise<JsonRpcAnswer> {
  return call(url, 'message/send', { message: userMessage(text), ...extra })
}
