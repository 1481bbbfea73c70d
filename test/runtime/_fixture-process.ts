import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const FIXTURE = fileURLToPath(new URL('../fixtures/serve-agent.mjs', import.meta.url))

/**
 * Starts test/fixtures/serve-agent.mjs as its own process (so a test can SIGKILL it) and resolves once it
 * prints its url. The caller ends it.
 */
export async function startServeFixture(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [FIXTURE], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      const match = /^url (\S+)$/m.exec(out)
      if (match) resolve(match[1]!)
    })
    child.once('exit', (code) => reject(new Error(`the fixture exited (${code}) before listening: ${stderr.slice(-1000)}`)))
  })
  return { child, url }
}
