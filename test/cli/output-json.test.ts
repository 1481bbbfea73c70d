import { describe, expect, it } from 'vitest'
import { createOutput, type OutputOptions } from '../../runtime/src/cli/output/_output.ts'
import type { StreamResponse, Task } from '../../runtime/src/client/types.ts'

/** `-o json`: the protocol's own documents on stdout, one document, or one line per event under --stream. */

function capture(options: Partial<OutputOptions> = {}) {
  const out: string[] = []
  const err: string[] = []
  const output = createOutput({
    format: 'json',
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: (text: string) => err.push(text) },
    ...options,
  })
  return { output, stdout: () => out.join(''), stderr: () => err.join(''), writes: out }
}

const task: Task = {
  id: 't',
  contextId: 'c',
  status: { state: 'TASK_STATE_COMPLETED' },
  artifacts: [{ artifactId: 'a', parts: [{ text: 'line one\nline two \x1b[31m' }] }],
}

describe('json', () => {
  it('prints the terminal document unchanged, on one line that one parse reads', () => {
    const { output, stdout, stderr } = capture()
    expect(output.result('send', { task })).toBe(0)
    expect(stdout().endsWith('\n')).toBe(true)
    expect(stdout().trimEnd().split('\n')).toHaveLength(1)
    expect(JSON.parse(stdout())).toEqual({ task })
    expect(stderr()).toBe('')
  })

  it('keeps diagnostics off stdout: a paused task is a warning on stderr, the document alone on stdout', () => {
    const { output, stdout, stderr } = capture()
    const paused: Task = { id: 't', contextId: 'c', status: { state: 'TASK_STATE_INPUT_REQUIRED' } }
    expect(output.result('task', paused)).toBe(0)
    expect(JSON.parse(stdout())).toEqual(paused)
    expect(stderr()).toMatch(/^Warning: task t is waiting for your input/)
  })

  it('prints the protocol empty answer for a deleted push config', () => {
    const { output, stdout } = capture()
    output.result('push-config-deleted', { taskId: 't', id: 'p' })
    expect(stdout()).toBe('{}\n')
  })

  it('prints a failure as the error envelope on stdout', () => {
    const { output, stdout, stderr } = capture()
    expect(output.error(new Error('boom'))).toBe(1)
    expect(JSON.parse(stdout())).toEqual({
      error: { code: 'A2ACLI_ERR_INTERNAL', message: 'boom', hint: null, a2aCode: null },
    })
    expect(stderr()).toBe('')
  })
})

describe('json --stream', () => {
  const events: StreamResponse[] = [
    { task: { id: 't', contextId: 'c', status: { state: 'TASK_STATE_SUBMITTED' } } },
    { artifactUpdate: { taskId: 't', contextId: 'c', artifact: { artifactId: 'a', parts: [{ text: 'a\nb' }] } } },
    { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_REJECTED' } } },
  ]

  it('writes each event as one line when it comes, the terminal event last', () => {
    const { output, stdout, stderr, writes } = capture()
    events.forEach((event, index) => {
      output.event(event)
      expect(writes).toHaveLength(index + 1)
      expect(JSON.parse(writes[index]!)).toEqual(event)
      expect(writes[index]!.endsWith('\n')).toBe(true)
      expect(writes[index]!.slice(0, -1)).not.toContain('\n')
    })
    expect(output.end()).toBe(0)
    expect(stdout().trimEnd().split('\n')).toHaveLength(3)
    expect(stderr()).toBe('Warning: task t ended REJECTED\n')
  })

  it('ends a broken stream with the error envelope as its last line', () => {
    const { output, stdout } = capture()
    output.event(events[0]!)
    expect(output.error(new Error('stream cut'))).toBe(1)
    const lines = stdout().trimEnd().split('\n')
    expect(lines).toHaveLength(2)
    expect(JSON.parse(lines[1]!).error.code).toBe('A2ACLI_ERR_INTERNAL')
  })
})
