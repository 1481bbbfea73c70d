import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { a2a, commandsAgent, emptyFolder, field, oneDocument, startRuntimeAgent, taskOf } from './_agent-commands.ts'

/** `a2a task download`: a task's artifacts saved as files in --dir, and never anywhere else. */

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
