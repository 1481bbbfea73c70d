import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runtimeDir } from '../_support.ts'

/**
 * What the tests of a folder of agents share (`a2a dev` and `a2a start` of `src/agents/`): a project with no
 * `src/agent.ts` and an agent module per name, each answering `<answer> loads=<n>` where n counts how many times
 * its module was evaluated in the process (a module not reloaded keeps its count), and with `gate`, a message
 * "long" works until that file exists. `shared.ts` is a module both may import.
 */

export function agentModule({
  name,
  answer = 'v1',
  gate = '',
  broken = false,
  importsShared = false,
}: {
  name: string
  answer?: string
  gate?: string
  broken?: boolean
  importsShared?: boolean
}): string {
  return `import { existsSync } from 'node:fs'
import { defineAgent } from 'a2a-runtime'
${importsShared ? "import { suffix } from './shared.ts'" : "const suffix = ''"}

const counts = ((globalThis as any).__moduleLoads ??= {})
counts[${JSON.stringify(name)}] = (counts[${JSON.stringify(name)}] ?? 0) + 1
const loads = counts[${JSON.stringify(name)}]

export default defineAgent({
  card: { name: ${JSON.stringify(`${name} agent`)}, description: 'Answers with its version and its module loads', skills: [{ id: 'v', name: 'Version', description: 'Says the version', tags: ['test'], examples: ['which?'] }] },
  async execute(ctx, task) {
    while (${JSON.stringify(gate)} && ctx.text === 'long' && !existsSync(${JSON.stringify(gate)})) await new Promise((resolve) => setTimeout(resolve, 20))
    task.artifact(${JSON.stringify(answer)} + suffix + ' loads=' + loads)
    task.complete()
  }${broken ? ' +' : ''},
})
`
}

export const sharedModule = (suffix: string) => `export const suffix = ${JSON.stringify(suffix)}\n`

/** A project whose `src/agents/` holds the given modules (file name → source). */
export function makeAgentsProject(prefix: string, modules: Record<string, string>): string {
  const project = mkdtempSync(join(tmpdir(), prefix))
  mkdirSync(join(project, 'src/agents'), { recursive: true })
  mkdirSync(join(project, 'node_modules'))
  symlinkSync(runtimeDir, join(project, 'node_modules/a2a-runtime'), 'dir')
  for (const [file, source] of Object.entries(modules)) writeFileSync(join(project, 'src/agents', file), source)
  return project
}

/** A JSON-RPC (platform) message/send to `url`: its status and body. */
export async function sendText(url: string, text = 'which?', extra: Record<string, unknown> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { role: 'user', messageId: `m${Math.random()}`, parts: [{ kind: 'text', text }] }, ...extra },
    }),
  })
  return {
    status: response.status,
    body: (await response.json()) as { result?: any; error?: { code: number; message: string } },
  }
}

/** The text an agent answers "which?" with, or the error's message. */
export async function answerOf(url: string): Promise<string | undefined> {
  const { body } = await sendText(url)
  return body.result?.artifacts?.[0]?.parts?.[0]?.text ?? body.error?.message
}
