import { type ChildProcess, spawn } from 'node:child_process'
import { freePort } from './_support.ts'

/** Serving a generated project the way its README says, and talking to it: what the process-level suites share. */

/** Waiting for a server or an event: generous, since a loaded 2-core machine slows everything many times over. */
export const SLOW = 60_000

export interface ServedProject {
  url: string
  /**
   * SIGTERM to the group the command leads (a package manager dies by the signal; a2a shuts down); true once
   * the port is closed, within 30 s (the package manager may exit before a2a has handled the signal).
   */
  stop(): Promise<boolean>
}

/**
 * `npm start` (or another command) in `project` on a free port of 127.0.0.1, resolved once the card answers.
 * The child leads a process group of its own, tracked in `running` until stopped, so a suite's afterAll can
 * end the group when a test fails first.
 */
export async function startProject(
  project: string,
  running: Set<ChildProcess>,
  env: Record<string, string> = {},
  [command, ...args]: string[] = ['npm', 'start'],
  baseEnv: NodeJS.ProcessEnv = process.env,
): Promise<ServedProject> {
  let started: { child: ChildProcess; url: string; exited: Promise<number | null> } | undefined
  // A free port is free when asked, not when the server binds it: another process on a busy machine may take it in
  // between. Then the server says so and exits, and the project is started again on another port.
  for (let attempt = 1; !started; attempt++) {
    const port = await freePort()
    const child = spawn(command!, args, {
      cwd: project,
      env: { ...baseEnv, PORT: String(port), HOST: '127.0.0.1', ...env },
      detached: true,
    })
    running.add(child)
    const url = `http://127.0.0.1:${port}/`
    try {
      const { exited } = await untilCardAnswers(child, url, [command, ...args].join(' '))
      started = { child, url, exited }
    } catch (error) {
      running.delete(child)
      if (attempt === 3 || !/address already in use|EADDRINUSE/i.test(String(error))) throw error
    }
  }
  const { child, url, exited } = started
  return {
    url,
    async stop() {
      process.kill(-child.pid!, 'SIGTERM')
      await exited
      running.delete(child)
      for (
        const until = Date.now() + 30_000;
        Date.now() < until;
        await new Promise((resolve) => setTimeout(resolve, 50))
      ) {
        const open = await fetch(`${url}.well-known/agent.json`).then(
          () => true,
          () => false,
        )
        if (!open) return true
      }
      return false
    },
  }
}

/**
 * Collects what `child` prints and waits until the card answers at `url`; fails, with that output, when the child
 * exits first or after `SLOW`. `what` names the command in the error.
 */
export async function untilCardAnswers(
  child: ChildProcess,
  url: string,
  what: string,
): Promise<{ output(): string; exited: Promise<number | null> }> {
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const deadline = Date.now() + SLOW
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}:\n${output}`)
    if (Date.now() > deadline) throw new Error(`${what} did not serve the card within ${SLOW / 1000} s:\n${output}`)
    const ok = await fetch(`${url}.well-known/agent.json`).then(
      (response) => response.ok,
      () => false,
    )
    if (ok) return { output: () => output, exited }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** A v0.3 `message/send` of `text` (to `skillId` when given); the HTTP status and the JSON-RPC answer. */
export async function send(url: string, text: string, headers: Record<string, string> = {}, skillId?: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'e2e',
      method: 'message/send',
      params: {
        message: {
          role: 'user',
          messageId: 'm1',
          parts: [{ kind: 'text', text }],
          ...(skillId && { metadata: { skillId } }),
        },
      },
    }),
  })
  return {
    status: response.status,
    body: (await response.json()) as { result?: any; error?: { code: number; message: string } },
  }
}

/** The text of a task's first artifact. */
export const answerText = (task: { artifacts: Array<{ parts: Array<{ text?: string }> }> }) =>
  task.artifacts[0]!.parts.map((part) => part.text ?? '').join('')
