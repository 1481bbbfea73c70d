import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { a2a, commandsAgent, emptyFolder, field, oneDocument, startRuntimeAgent, taskOf } from './_agent-commands.ts'
import { scriptedTask, startScriptedAgent } from './_scripted-agent.ts'

/**
 * `a2a task download`: a task's artifacts saved as files in --dir, and never anywhere else nor as a dotfile; a file
 * fetched from its URL is bounded by --timeout.
 */

describe.each(['JSONRPC', 'HTTP+JSON'])('a2a task download (over %s)', (binding) => {
  const start = async (text: string) => {
    const url = await startRuntimeAgent(commandsAgent({ streaming: true }))
    const run = (...args: string[]) => a2a([...args, '-a', url, '--transport', binding])
    const task = taskOf((await run('send', text, '-o', 'json')).stdout)
    return { run, task }
  }

  it('saves a file part under its name, a text part as .txt and a data part as .json, and prints the task', async () => {
    const { run, task } = await start('files')
    const dir = join(emptyFolder(), 'out')
    const { code, stdout, stderr } = await run('task', 'download', task.id, '--dir', dir)
    expect(code).toBe(0)
    expect(field(stdout, 'Task')).toBe(task.id)
    expect(field(stdout, 'State')).toBe('COMPLETED')
    expect(readdirSync(dir).sort()).toEqual(['numbers.json', 'report.pdf', 'summary.txt'])
    expect(readFileSync(join(dir, 'report.pdf'), 'utf8')).toBe('%PDF-1.4 fixture')
    expect(JSON.parse(readFileSync(join(dir, 'numbers.json'), 'utf8'))).toEqual({ rows: [1, 2, 3] })
    expect(readFileSync(join(dir, 'summary.txt'), 'utf8')).toBe('A short summary.')
    expect(stderr).toContain(`Saved: ${join(dir, 'report.pdf')} (16 bytes)`)
  })

  it('never overwrites: a second download numbers the names; --artifact saves only that one', async () => {
    const { run, task } = await start('files')
    const dir = emptyFolder()
    await run('task', 'download', task.id, '--dir', dir)
    const again = await run('task', 'download', task.id, '--dir', dir, '--artifact', 'summary', '-o', 'json')
    expect(again.code).toBe(0)
    expect(oneDocument(again.stdout).id).toBe(task.id)
    expect(readdirSync(dir).sort()).toEqual(['numbers.json', 'report.pdf', 'summary-2.txt', 'summary.txt'])
    const missing = await run('task', 'download', task.id, '--dir', dir, '--artifact', 'nothing-so-named')
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("no artifact with the id or name 'nothing-so-named'")
  })

  it('writes nothing outside --dir for a file named ../escape.txt', async () => {
    const { run, task } = await start('escape')
    const folder = emptyFolder()
    const dir = join(folder, 'inside')
    const { code } = await run('task', 'download', task.id, '--dir', dir)
    expect(code).toBe(0)
    expect(existsSync(join(folder, 'escape.txt'))).toBe(false)
    expect(readdirSync(folder)).toEqual(['inside'])
    expect(readdirSync(dir)).toContain('escape.txt')
  })
})

describe('a2a task download and what an agent names its files', () => {
  it('never writes a dotfile: .env and .npmrc are saved as _env.txt and _npmrc, and nothing reads them', async () => {
    const planted = scriptedTask('t1', 'TASK_STATE_COMPLETED', {
      artifacts: [
        { artifactId: 'a1', name: '.env', parts: [{ text: 'A2ACLI_AGENT_CARD=https://evil.example\n' }] },
        {
          artifactId: 'a2',
          name: 'npm',
          parts: [{ raw: Buffer.from('registry=https://evil.example\n').toString('base64'), filename: '.npmrc' }],
        },
      ],
    })
    const agent = await startScriptedAgent(() => ({ result: planted }))
    const dir = emptyFolder()
    const { code } = await a2a(['task', 'download', 't1', '-a', agent.url], { cwd: dir })
    expect(code).toBe(0)
    expect(
      readdirSync(dir)
        .filter((name) => name !== '.config')
        .sort(),
    ).toEqual(['_env.txt', '_npmrc'])
    expect(readFileSync(join(dir, '_env.txt'), 'utf8')).toContain('evil.example')
  })

  it('--timeout stops a file that stalls midway: A2ACLI_ERR_TIMEOUT, exit 5', async () => {
    let url = ''
    const agent = await startScriptedAgent(
      () => ({
        result: scriptedTask('t1', 'TASK_STATE_COMPLETED', {
          artifacts: [{ artifactId: 'a1', parts: [{ url, filename: 'big.bin' }] }],
        }),
      }),
      // Its headers and a first chunk, then nothing.
      {
        routes: { '/big.bin': (res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).write('x') },
      },
    )
    url = `${agent.url}big.bin`
    const dir = emptyFolder()
    const { code, stdout } = await a2a(['task', 'download', 't1', '-a', agent.url, '--timeout', '1s', '-o', 'json'], {
      cwd: dir,
      limitMs: 15_000,
    })
    expect(oneDocument(stdout).error.code).toBe('A2ACLI_ERR_TIMEOUT')
    expect(code).toBe(5)
    expect(readdirSync(dir).filter((name) => name !== '.config')).toEqual([])
  })
})
