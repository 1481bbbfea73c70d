import { type ChildProcess, spawn } from 'node:child_process'
import { tmpdir } from 'node:os'
import { a2aBin } from '../../_support.ts'

/** The `a2a` command as a process: what every compliance check observes. */

/** The environment without anything that would choose the agent, the credentials or the configuration folder. */
export { a2aBin }

export const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_|A2ACLI_|XDG_CONFIG_HOME$)/.test(key)),
) as Record<string, string>

export interface Run {
  /** The exit status; a signal's end is 128 + its number, a run killed past its limit -1. */
  code: number
  stdout: string
  stderr: string
  /** Wall time from spawn to exit. */
  ms: number
  /** When the first byte of stdout arrived, ms after spawn (undefined: none did). */
  firstStdoutMs?: number
}

export interface RunOptions {
  cwd: string
  env?: Record<string, string>
  /** Written to stdin, then closed; otherwise stdin is closed at once, unless `keepStdin` (`watch` writes to it). */
  stdin?: string
  keepStdin?: boolean
  /** Killed by its PID past this (default 20 s). */
  limitMs?: number
  /** Called on each chunk with all output so far and the child: a check that interrupts it does so by its PID. */
  watch?: (output: { stdout: string; stderr: string }, child: ChildProcess) => void
  /** Another program to run in place of `a2a` (one that runs it: a terminal emulator). */
  command?: [string, string[]]
}

/** Every error envelope seen in any run, with the exit status it came with: the error code section's evidence. */
export const envelopes: Array<{ code: string; exit: number; check: string }> = []

/** Runs `a2a <args>` to its end. `check` names the requirement the run is evidence for. */
export function a2a(check: string, args: string[], options: RunOptions): Promise<Run> {
  const [file, argv] = options.command ?? [process.execPath, [a2aBin, ...args]]
  return runProcess(check, file, argv, options)
}

/**
 * Runs a bash script in which `a2a` is this repository's command (a command line the CLI printed, run as a user
 * would paste it).
 */
export function shell(check: string, script: string, options: RunOptions): Promise<Run> {
  const define = `a2a() { ${JSON.stringify(process.execPath)} ${JSON.stringify(a2aBin)} "$@"; }`
  return runProcess(check, 'bash', ['-c', `${define}\n${script}`], options)
}

function runProcess(check: string, file: string, args: string[], options: RunOptions): Promise<Run> {
  const started = performance.now()
  const child = spawn(file, args, {
    cwd: options.cwd,
    env: { ...cleanEnv, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  let firstStdoutMs: number | undefined
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    firstStdoutMs ??= performance.now() - started
    stdout += chunk
    options.watch?.({ stdout, stderr }, child)
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
    options.watch?.({ stdout, stderr }, child)
  })
  child.stdin.on('error', () => {})
  if (!options.keepStdin) child.stdin.end(options.stdin ?? '')
  let killed = false
  const timer = setTimeout(() => {
    killed = true
    process.kill(child.pid!, 'SIGKILL')
  }, options.limitMs ?? 20_000)
  return new Promise((resolve) =>
    child.once('close', (status, signal) => {
      clearTimeout(timer)
      const code = killed ? -1 : (status ?? 128 + (signal === 'SIGINT' ? 2 : 9))
      const run: Run = { code, stdout, stderr, ms: performance.now() - started, firstStdoutMs }
      for (const envelope of errorEnvelopes(run)) envelopes.push({ code: envelope, exit: code, check })
      resolve(run)
    }),
  )
}

/** The error codes a run reported: the json envelope on stdout (its last line), or the `Code:` line on stderr. */
function errorEnvelopes(run: Run): string[] {
  const codes: string[] = []
  const last = run.stdout.trimEnd().split('\n').at(-1) ?? ''
  const json = parseJson(last) as { error?: { code?: unknown } } | undefined
  if (typeof json?.error?.code === 'string') codes.push(json.error.code)
  const text = /^Code: (\S+)$/m.exec(run.stderr)
  if (text) codes.push(text[1]!)
  return codes
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Every line of a JSONL output parsed (undefined for a line that is not JSON). */
export const jsonLines = (text: string): unknown[] =>
  text
    .trimEnd()
    .split('\n')
    .filter((line) => line !== '')
    .map(parseJson)

/** The error envelope of a json run (its last stdout line), if it is one. */
export function envelopeOf(
  run: Run,
): { code: string; message: string; hint: string | null; a2aCode: unknown } | undefined {
  const last = parseJson(run.stdout.trimEnd().split('\n').at(-1) ?? '') as { error?: unknown } | undefined
  return last && typeof last.error === 'object' ? (last.error as never) : undefined
}

/** The value of a `Label: value` line of text output. */
export const field = (text: string, label: string): string | undefined =>
  new RegExp(`^${label}: (.*)$`, 'm').exec(text)?.[1]

/** What a run did, in a few words for a note: its exit status and the start of what it said. */
export function described(run: Run): string {
  const said = (run.stderr.trim() || run.stdout.trim()).split('\n')[0] ?? ''
  return `exit ${run.code}${said ? `, "${scrub(said).slice(0, 120)}"` : ''}`
}

/**
 * Text without what changes from run to run (addresses, ports, ids, temporary folders, timings), so a note made of
 * it reads the same on every run and the report stays unchanged while the results are.
 */
export function scrub(text: string): string {
  return text
    .replace(/https?:\/\/127\.0\.0\.1:\d+/g, '<agent>')
    .replace(/127\.0\.0\.1:\d+/g, '<agent>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<id>')
    .replaceAll(tmpdir(), '<tmp>')
    .replace(/<tmp>\/[^\s'"]+/g, '<folder>')
    .replace(/\d+ ms\b/g, '<n> ms')
}
