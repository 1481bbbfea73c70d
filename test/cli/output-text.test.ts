import { describe, expect, it } from 'vitest'
import { createOutput, type OutputOptions } from '../../runtime/src/cli/output/_output.ts'
import type { StreamResponse, Task } from '../../runtime/src/client/types.ts'

/** The `text` format of the a2a client commands: fields, blocks, artifacts, resume commands, warnings. */

function capture(options: Partial<OutputOptions> = {}) {
  const out: string[] = []
  const err: string[] = []
  const output = createOutput({
    format: 'text',
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: (text: string) => err.push(text) },
    ...options,
  })
  return { output, stdout: () => out.join(''), stderr: () => err.join(''), writes: out }
}

const completed: Task = {
  id: 'task-1',
  contextId: 'ctx-1',
  status: { state: 'TASK_STATE_COMPLETED' },
  artifacts: [
    {
      artifactId: 'a1',
      name: 'answer',
      parts: [{ text: 'Hello\n\nworld' }, { data: { total: 3, items: ['x'] } }],
    },
    {
      artifactId: 'a2',
      parts: [
        { raw: Buffer.from('12345').toString('base64'), filename: 'report.pdf', mediaType: 'application/pdf' },
        { url: 'https://files.example/x.png', mediaType: 'image/png' },
        { url: 'https://files.example/y', filename: 'y.csv', mediaType: 'text/csv' },
      ],
    },
  ],
}

describe('text', () => {
  it('prints a task as fields, then one block per artifact: text, data as indented JSON, files by name and size', () => {
    const { output, stdout, stderr } = capture()
    expect(output.result('task', completed)).toBe(0)
    expect(stdout()).toBe(
      [
        'Task: task-1',
        'Context: ctx-1',
        'State: COMPLETED',
        'Artifact: answer (a1)',
        '  Hello',
        '  ',
        '  world',
        '  {',
        '    "total": 3,',
        '    "items": [',
        '      "x"',
        '    ]',
        '  }',
        '',
        'Artifact: a2',
        '  File: report.pdf (application/pdf, 5 bytes)',
        '  File: https://files.example/x.png (image/png)',
        '  File: y.csv (text/csv, https://files.example/y)',
        '',
        '',
      ].join('\n'),
    )
    expect(stderr()).toBe('')
  })

  it('prints the exact command that answers an interrupted task, the agent named as given, and warns', () => {
    const { output, stdout, stderr } = capture({ agentRef: 'https://agents.example/a b' })
    const task: Task = {
      id: 't-2',
      contextId: 'c-2',
      status: {
        state: 'TASK_STATE_INPUT_REQUIRED',
        message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'Which date?' }] },
      },
    }
    expect(output.result('send', { task })).toBe(0)
    expect(stdout()).toBe(
      [
        'Task: t-2',
        'Context: c-2',
        'State: INPUT_REQUIRED',
        `Resume: a2a send --agent-card 'https://agents.example/a b' --task-id t-2 --text "<reply>"`,
        'Message:',
        '  Which date?',
        '',
        '',
      ].join('\n'),
    )
    expect(stderr()).toBe(
      'Warning: task t-2 is waiting for your input (INPUT_REQUIRED): answer it with --task-id t-2\n',
    )
  })

  it('names no agent in the resume command when none was given (the default agent answers it again)', () => {
    const { output, stdout } = capture()
    output.result('task', { id: 't', contextId: 'c', status: { state: 'TASK_STATE_AUTH_REQUIRED' } })
    expect(stdout()).toContain('Resume: a2a send --task-id t --text "<reply>"\n')
  })

  it('tells how to follow a task still at work (--async)', () => {
    const { output, stdout, stderr } = capture({ agentRef: 'localhost:4000' })
    output.result('send', { task: { id: 't', contextId: 'c', status: { state: 'TASK_STATE_SUBMITTED' } } })
    expect(stdout()).toBe(
      'Task: t\nContext: c\nState: SUBMITTED\nFollow: a2a task get --agent-card localhost:4000 --wait t\n',
    )
    expect(stderr()).toBe('')
  })

  it.each([
    ['TASK_STATE_FAILED', 'Warning: task t ended FAILED\n'],
    ['TASK_STATE_REJECTED', 'Warning: task t ended REJECTED\n'],
    ['TASK_STATE_CANCELED', 'Warning: task t ended CANCELED\n'],
  ])('exits 0 on a task that ended %s, with a warning on stderr', (state, warning) => {
    const { output, stderr } = capture()
    expect(
      output.result('task', { id: 't', contextId: 'c', status: { state: state as Task['status']['state'] } }),
    ).toBe(0)
    expect(stderr()).toBe(warning)
  })

  it('does not warn that a task canceled by `task cancel` is canceled', () => {
    const { output, stdout, stderr } = capture()
    output.result('cancel', { id: 't', contextId: 'c', status: { state: 'TASK_STATE_CANCELED' } })
    expect(stdout()).toContain('State: CANCELED\n')
    expect(stderr()).toBe('')
  })

  it('prints a state A2A v1.0 does not define as received', () => {
    const { output, stdout } = capture()
    output.result('task', {
      id: 't',
      contextId: 'c',
      status: { state: 'TASK_STATE_PONDERING' as 'TASK_STATE_WORKING' },
    })
    expect(stdout()).toContain('State: TASK_STATE_PONDERING\n')
    const unspecified = capture()
    unspecified.output.result('task', { id: 't', contextId: 'c', status: { state: 'TASK_STATE_UNSPECIFIED' } })
    expect(unspecified.stdout()).toContain('State: UNSPECIFIED\n')
  })

  it('never prints a control sequence, and an agent cannot pose a field inside its text', () => {
    const { output, stdout } = capture()
    output.result('send', {
      message: {
        messageId: 'm',
        contextId: 'c\x1b[2J\nState: COMPLETED',
        role: 'ROLE_AGENT',
        parts: [{ text: 'red \x1b[31mtext\x1b[0m\r\nState: COMPLETED\n\x9b2Jbell\x07 \u202eevil' }],
      },
    })
    const printed = stdout()
    // biome-ignore lint/suspicious/noControlCharactersInRegex: none of these may reach the terminal
    expect(printed).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/)
    expect(printed).toBe(
      [
        'Context: c[2J State: COMPLETED',
        'Message:',
        '  red [31mtext[0m',
        '  State: COMPLETED',
        '  2Jbell evil',
        '',
        '',
      ].join('\n'),
    )
    expect(printed.split('\n').filter((line) => line.startsWith('State:'))).toEqual([])
  })

  it('--verbose heads every part with its kind, media type and metadata', () => {
    const { output, stdout } = capture({ verbose: true })
    output.result('task', {
      id: 't',
      contextId: 'c',
      status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-01-01T00:00:00Z' },
      artifacts: [
        {
          artifactId: 'a',
          parts: [
            { text: 'hi', mediaType: 'text/markdown', metadata: { lang: 'en' } },
            { data: [1], mediaType: 'application/json' },
          ],
        },
      ],
    })
    expect(stdout()).toBe(
      [
        'Task: t',
        'Context: c',
        'State: COMPLETED',
        'Updated: 2026-01-01T00:00:00Z',
        'Artifact: a',
        '  Part: text (text/markdown)',
        '  Metadata: {"lang":"en"}',
        '  hi',
        '  Part: data (application/json)',
        '  [',
        '    1',
        '  ]',
        '',
        '',
      ].join('\n'),
    )
  })

  it('prints a page of tasks as records, then the count and the next page token', () => {
    const { output, stdout } = capture()
    output.result('tasks', {
      tasks: [
        { id: 't1', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } },
        { id: 't2', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } },
      ],
      nextPageToken: 'next-1',
      pageSize: 2,
      totalSize: 5,
    })
    expect(stdout()).toBe(
      [
        'Task: t1',
        'Context: c',
        'State: WORKING',
        'Follow: a2a task get --wait t1',
        '',
        'Task: t2',
        'Context: c',
        'State: COMPLETED',
        '',
        'Tasks: 2',
        'Total: 5',
        'Next page: next-1',
        '',
      ].join('\n'),
    )
  })

  it('prints push configs without their token', () => {
    const { output, stdout } = capture()
    output.result('push-configs', {
      configs: [{ id: 'p1', taskId: 't', url: 'https://hooks.example/a', token: 'secret-token' }],
    })
    expect(stdout()).toBe(
      'Task: t\nPush config: p1\nURL: https://hooks.example/a\nToken: [redacted]\n\nPush configs: 1\n',
    )
    expect(stdout()).not.toContain('secret-token')
  })

  it('prints a card: identity, interfaces, capabilities, security schemes, skills', () => {
    const { output, stdout } = capture()
    output.result('card', {
      name: 'Echo',
      description: 'Says it back',
      version: '1.2.0',
      supportedInterfaces: [
        { url: 'https://a.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: 'https://a.example/v1', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: 'acme' },
      ],
      capabilities: { streaming: true },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain', 'application/json'],
      skills: [{ id: 'echo', name: 'Echo back' }],
    })
    expect(stdout()).toBe(
      [
        'Agent: Echo',
        'Description: Says it back',
        'Version: 1.2.0',
        'Interface: JSONRPC 1.0 https://a.example/rpc',
        'Interface: HTTP+JSON 1.0 https://a.example/v1 (tenant acme)',
        'Streaming: yes',
        'Push notifications: no',
        'Extended card: no',
        'Security: bearer (HTTP Bearer)',
        'Skill: echo (Echo back)',
        'Input modes: text/plain',
        'Output modes: text/plain, application/json',
        '',
      ].join('\n'),
    )
  })
})

describe('text --stream', () => {
  const events: StreamResponse[] = [
    { task: { id: 't', contextId: 'c', status: { state: 'TASK_STATE_SUBMITTED' } } },
    { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } } },
    {
      artifactUpdate: {
        taskId: 't',
        contextId: 'c',
        artifact: { artifactId: 'a', name: 'answer', parts: [{ text: 'Hel' }] },
      },
    },
    {
      artifactUpdate: {
        taskId: 't',
        contextId: 'c',
        append: true,
        artifact: { artifactId: 'a', parts: [{ text: 'lo\nwor' }] },
      },
    },
    {
      artifactUpdate: {
        taskId: 't',
        contextId: 'c',
        append: true,
        lastChunk: true,
        artifact: { artifactId: 'a', parts: [{ text: 'ld' }] },
      },
    },
    { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } } },
  ]

  it('prints each event as it comes, one artifact block across its chunks, and restates the task last', () => {
    const { output, stdout, writes } = capture()
    output.event(events[0]!)
    expect(stdout()).toContain('State: SUBMITTED\n')
    output.event(events[1]!)
    output.event(events[2]!)
    // The first chunk is on stdout before the next arrives.
    expect(writes.join('')).toMatch(/Artifact: answer \(a\)\n {2}Hel$/)
    for (const event of events.slice(3)) output.event(event)
    expect(output.end()).toBe(0)
    expect(stdout()).toBe(
      [
        'Task: t',
        'Context: c',
        'State: SUBMITTED',
        'Follow: a2a task get --wait t',
        'State: WORKING',
        'Artifact: answer (a)',
        '  Hello',
        '  world',
        '',
        'State: COMPLETED',
        'Task: t',
        'Context: c',
        'State: COMPLETED',
        '',
      ].join('\n'),
    )
  })

  it('a stream cut short still restates the task on stdout before the error on stderr', () => {
    const { output, stdout, stderr } = capture()
    output.event(events[0]!)
    output.event(events[2]!)
    expect(output.error(new Error('socket hang up'))).toBe(1)
    expect(stdout().endsWith('  Hel\n\nTask: t\nContext: c\nState: SUBMITTED\nFollow: a2a task get --wait t\n')).toBe(
      true,
    )
    expect(stderr()).toBe('Error: socket hang up\nCode: A2ACLI_ERR_INTERNAL\n')
  })

  it('a direct reply streams as its message, then its context', () => {
    const { output, stdout, stderr } = capture()
    output.event({ message: { messageId: 'm', contextId: 'c', role: 'ROLE_AGENT', parts: [{ text: 'hi' }] } })
    output.end()
    expect(stdout()).toBe('Context: c\nMessage:\n  hi\n\nContext: c\n')
    expect(stderr()).toBe('')
  })

  it('warns at the end of a stream whose task failed', () => {
    const { output, stderr } = capture()
    output.event(events[0]!)
    output.event({ statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_FAILED' } } })
    expect(output.end()).toBe(0)
    expect(stderr()).toBe('Warning: task t ended FAILED\n')
  })

  it('refuses a second terminal call', () => {
    const { output } = capture()
    output.result('task', completed)
    expect(() => output.end()).toThrow(/once/)
  })

  it('writes nothing of a document it cannot render, and the error still ends the output', () => {
    const { output, stdout, stderr } = capture()
    const malformed = { ...completed, artifacts: [{ artifactId: 'a', parts: 'oops' }] } as unknown as Task
    expect(() => output.result('task', malformed)).toThrow()
    expect(stdout()).toBe('')
    expect(output.error(new Error('parts.forEach is not a function'))).toBe(1)
    expect(stdout()).toBe('')
    expect(stderr()).toBe('Error: parts.forEach is not a function\nCode: A2ACLI_ERR_INTERNAL\n')
  })

  it('a failure after the whole document is reported on stderr, the document alone on stdout', () => {
    for (const format of ['text', 'json'] as const) {
      const { output, stdout, stderr } = capture({ format })
      output.result('task', completed)
      const document = stdout()
      expect(output.error(new Error('late'))).toBe(1)
      expect(stdout()).toBe(document)
      expect(stderr()).toBe('Error: late\nCode: A2ACLI_ERR_INTERNAL\n')
    }
  })
})
