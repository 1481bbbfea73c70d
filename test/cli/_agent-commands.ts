import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type A2AAppOptions, type Agent, defineAgent, type Part } from 'a2a-runtime'
import { afterEach, expect } from 'vitest'
import { afterThisTest, serveOnLoopback } from '../_loopback-agents.ts'
import { sdkTestAgent } from '../_sdk-v1.ts'
import { a2aBin, type CommandResult } from '../_support.ts'

/**
 * What the suites of the client commands (`a2a send`, `a2a task …`, `a2a card get`) share: agents on 127.0.0.1 at
 * free ports (this runtime's, served in the test's process, and one on the official SDK's server), each closed after
 * the test that started it, and the CLI as a process (the built runtime's `a2a`) in a folder of no project, with no
 * configuration of the machine's.
 */

const running = new Set<ChildProcess>()

afterEach(async () => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
  running.clear()
})

/** The environment without anything that would choose the agent, the credentials or the configuration. */
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_|A2ACLI_|XDG_CONFIG_HOME$)/.test(key)),
) as NodeJS.ProcessEnv

/** The runtime's sdkTestAgent: "On it", then `Echo: <text>` in chunks; "ask" asks "Which city?"; "wait" works on. */
const echoAgent = (streaming: boolean, push = true) =>
  sdkTestAgent(
    {
      name: 'Runtime Echo',
      description: 'Echoes in chunks',
      capabilities: { streaming, pushNotifications: push },
    },
    { waitMs: 60_000 },
  )

/**
 * The echo agent and more, for the commands' own cases: "reply" answers with a message (no task), "fail" fails,
 * "files" answers with a file, a data and a text artifact (the file named `report.pdf`, or `../escape.txt` for
 * "escape"), "gate" works until `openGate` is called; each message's parts are handed to `onMessage`.
 */
export function commandsAgent(options: {
  streaming: boolean
  push?: boolean
  onMessage?: (parts: Part[]) => void
}): Agent & { openGate(): void; started: Promise<void> } {
  let openGate!: () => void
  const gate = new Promise<void>((resolve) => (openGate = resolve))
  let markStarted!: () => void
  const started = new Promise<void>((resolve) => (markStarted = resolve))
  const echo = echoAgent(options.streaming, options.push ?? true)
  const agent = defineAgent({
    card: {
      ...echo.card,
      name: 'Commands Fixture',
      description: 'Echoes, asks, fails, replies and makes files',
      defaultInputModes: ['text/plain', 'text/markdown', 'application/pdf', 'application/json'],
    },
    messageReplies: true,
    async execute(ctx, task) {
      options.onMessage?.(ctx.message.parts)
      markStarted()
      if (ctx.text === 'reply') return task.reply(`Hello from ${ctx.text}`)
      if (ctx.text === 'fail') return task.fail('No luck today')
      if (ctx.text === 'gate') {
        task.working('Waiting at the gate')
        await gate
        task.artifact('through the gate')
        return task.complete()
      }
      if (ctx.text === 'files' || ctx.text === 'escape') {
        const name = ctx.text === 'files' ? 'report.pdf' : '../escape.txt'
        const bytes = Buffer.from('%PDF-1.4 fixture').toString('base64')
        task.artifact([{ kind: 'file', file: { name, mimeType: 'application/pdf', bytes } }], { name: 'report' })
        task.artifact({ rows: [1, 2, 3] }, { name: 'numbers' })
        task.artifact('A short summary.', { name: 'summary' })
        return task.complete()
      }
      return echo.execute(ctx, task)
    },
    cancel: (ctx, task) => echo.cancel!(ctx, task),
  })
  return Object.assign(agent, { openGate, started })
}

/** This runtime serving `agent` on 127.0.0.1 (push to loopback webhooks allowed); its base URL. */
export async function startRuntimeAgent(agent: Agent, options: Omit<A2AAppOptions, 'logger'> = {}): Promise<string> {
  // A task still at work when the test ends is stopped at once.
  return serveOnLoopback(agent, { shutdownTimeoutMs: 50, ...options })
}

export { startSdkAgent } from '../_loopback-agents.ts'

/** A folder of no project (no `.env`), with an empty configuration folder: removed after the test. */
export function emptyFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'a2a-commands-'))
  afterThisTest(async () => rmSync(folder, { recursive: true, force: true }))
  return folder
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv
  cwd?: string
  /** What stdin is: nothing (`/dev/null`), this text, or a pipe left open and never written. */
  stdin?: 'null' | 'open-pipe' | { text: string }
  /** Killed by PID past this long. @default 20000 */
  limitMs?: number
}

export interface RunningCommand {
  child: ChildProcess
  stdout(): string
  stderr(): string
  done: Promise<CommandResult>
}

/** `a2a <args>` as a process, without a terminal. */
export function startCommand(args: string[], options: RunOptions = {}): RunningCommand {
  const cwd = options.cwd ?? emptyFolder()
  const stdin = options.stdin ?? 'null'
  const child = spawn(process.execPath, [a2aBin, ...args], {
    cwd,
    env: { ...cleanEnv, XDG_CONFIG_HOME: join(cwd, '.config'), ...options.env },
    stdio: [stdin === 'null' ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  })
  running.add(child)
  if (typeof stdin === 'object') child.stdin!.end(stdin.text)
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const timer = setTimeout(() => process.kill(child.pid!, 'SIGKILL'), options.limitMs ?? 20_000)
  const done = new Promise<CommandResult>((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer)
      running.delete(child)
      resolve({ code, stdout, stderr })
    }),
  )
  return { child, stdout: () => stdout, stderr: () => stderr, done }
}

/** `a2a <args>` to its end. */
export const a2a = (args: string[], options: RunOptions = {}): Promise<CommandResult> =>
  startCommand(args, options).done

/** The one JSON document on stdout (exactly one line). */
export function oneDocument(stdout: string): any {
  const lines = stdout.split('\n').filter((line) => line !== '')
  expect(lines, stdout).toHaveLength(1)
  return JSON.parse(lines[0]!)
}

/** Each line of JSON Lines, parsed. */
export const jsonLines = (stdout: string): any[] =>
  stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line))

/** A text field's value (`Label: value`), the first one. */
export function field(text: string, label: string): string | undefined {
  return new RegExp(`^${label}: (.*)$`, 'm').exec(text)?.[1]
}

/** No stack trace, no Node.js error dump. */
export function expectNoStack(text: string): void {
  expect(text).not.toMatch(/^\s+at /m)
  expect(text).not.toMatch(/node:internal|Error: .*\n\s+at/)
}

/** The task of a `send -o json` answer, or of `--async`. */
export const taskOf = (stdout: string): any => oneDocument(stdout).task

export interface CuttingProxy {
  /** The proxy's origin with a trailing slash: the agent's card, with the agent's addresses turned into its own. */
  url: string
  /** The `Last-Event-ID` header of each request that carried one. */
  lastEventIds: string[]
  /** How many streams it has cut. */
  cuts(): number
}

/**
 * A proxy on 127.0.0.1 in front of `target` (an origin with a trailing slash) that passes every request through and
 * cuts the first `streams` SSE answers after their first event (destroying the connection, as a dying load balancer
 * does); later streams pass whole. The card it passes on names the proxy in place of the agent, so every call goes
 * through it.
 */
export async function cuttingProxy(target: string, streams: number): Promise<CuttingProxy> {
  const origin = target.replace(/\/$/, '')
  const lastEventIds: string[] = []
  let cut = 0
  let self = ''
  const server = createServer((request, response) => {
    const header = request.headers['last-event-id']
    if (typeof header === 'string') lastEventIds.push(header)
    const upstream = httpRequest(
      `${origin}${request.url}`,
      { method: request.method, headers: { ...request.headers, host: new URL(origin).host } },
      (answer) => {
        const type = String(answer.headers['content-type'] ?? '')
        if (type.startsWith('text/event-stream') && cut < streams) {
          cut++
          response.writeHead(answer.statusCode ?? 200, answer.headers)
          let seen = ''
          answer.setEncoding('utf8').on('data', (chunk: string) => {
            seen += chunk
            const end = seen.search(/\r?\n\r?\n/)
            if (end === -1) return
            answer.destroy()
            response.write(seen.slice(0, end + 2), () => response.socket?.destroy())
          })
          return
        }
        if (type.startsWith('application/json') && request.url?.includes('agent-card')) {
          let body = ''
          answer.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
          answer.on('end', () => {
            const { 'content-length': _, ...headers } = answer.headers
            response.writeHead(answer.statusCode ?? 200, headers)
            response.end(body.replaceAll(origin, self.replace(/\/$/, '')))
          })
          return
        }
        response.writeHead(answer.statusCode ?? 200, answer.headers)
        answer.pipe(response)
      },
    )
    upstream.on('error', () => response.socket?.destroy())
    request.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  self = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  afterThisTest(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { url: self, lastEventIds, cuts: () => cut }
}
