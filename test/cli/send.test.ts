import { describe, expect, it } from 'vitest'
import {
  a2a,
  commandsAgent,
  expectNoStack,
  field,
  jsonLines,
  oneDocument,
  startRuntimeAgent,
  taskOf,
} from './_agent-commands.ts'
import { scriptedTask, startScriptedAgent } from './_scripted-agent.ts'

/**
 * `a2a send` as a process against this runtime's agent, with streaming on and off, over JSON-RPC and over HTTP+JSON
 * (`--transport`): it waits by default, prints one document with -o json and JSON Lines with --stream, returns at
 * once with --async, stops at INPUT_REQUIRED with the command that answers it, and exits 0 for whatever the agent
 * decided (the outcome is in the output and a warning), 1 for what it could not do.
 */

const artifactText = (task: { artifacts?: Array<{ parts: Array<{ text?: string }> }> }) =>
  (task.artifacts ?? []).flatMap((artifact) => artifact.parts.map((part) => part.text ?? '')).join('')

/** Where `--debug` says the message was sent: the JSON-RPC method, or the HTTP+JSON path. */
function sentWith(stderr: string): string | undefined {
  return (
    /"method":"(SendMessage|SendStreamingMessage)"/.exec(stderr)?.[1] ?? /→ POST \S+\/(message:\w+) /.exec(stderr)?.[1]
  )
}

describe.each([
  ['streaming', 'JSONRPC', true],
  ['streaming', 'HTTP+JSON', true],
  ['no streaming', 'JSONRPC', false],
  ['no streaming', 'HTTP+JSON', false],
] as const)('a2a send to this runtime (%s, over %s)', (_, binding, streaming) => {
  const start = async () => {
    const agent = commandsAgent({ streaming })
    const url = await startRuntimeAgent(agent)
    return { agent, url, send: (...args: string[]) => a2a(['send', '-a', url, '--transport', binding, ...args]) }
  }

  it('waits for the task by default: exit 0, Task, Context and State COMPLETED, the artifact text rendered', async () => {
    const { send } = await start()
    const { code, stdout, stderr } = await send('hello', 'world', '--debug')
    expect(code).toBe(0)
    expect(field(stdout, 'Task')).toMatch(/^[\w-]+$/)
    expect(field(stdout, 'Context')).toMatch(/^[\w-]+$/)
    expect(field(stdout, 'State')).toBe('COMPLETED')
    expect(stdout).toMatch(/^Artifact: .*\n {2}Echo: hello world\n\n/m)
    // The card's streaming decides how it waits: over the stream, or the blocking answer.
    const expected =
      binding === 'JSONRPC' ? ['SendStreamingMessage', 'SendMessage'] : ['message:stream', 'message:send']
    expect(sentWith(stderr)).toBe(streaming ? expected[0] : expected[1])
    expect(stderr).not.toContain('Warning:')
  })

  it('-o json prints exactly one SendMessageResponse document, the completed task in it', async () => {
    const { send } = await start()
    const { code, stdout, stderr } = await send('hello', '-o', 'json')
    expect(code).toBe(0)
    const document = oneDocument(stdout)
    expect(Object.keys(document)).toEqual(['task'])
    expect(document.task.status.state).toBe('TASK_STATE_COMPLETED')
    expect(artifactText(document.task)).toBe('Echo: hello')
    expect(stderr).toBe('')
  })

  it('--stream -o json prints JSON Lines, one StreamResponse an event, the last one terminal', async () => {
    const { send } = await start()
    const { code, stdout, stderr } = await send('hello', '--stream', '-o', 'json')
    expect(code).toBe(0)
    const events = jsonLines(stdout)
    for (const event of events) {
      expect(Object.keys(event)).toHaveLength(1)
      expect(['task', 'message', 'statusUpdate', 'artifactUpdate']).toContain(Object.keys(event)[0])
    }
    const last = events.at(-1)
    expect(last.statusUpdate?.status.state ?? last.task?.status.state).toBe('TASK_STATE_COMPLETED')
    if (streaming) {
      expect(events[0]).toHaveProperty('task')
      const chunks = events.filter((event) => 'artifactUpdate' in event)
      expect(chunks.map((event) => event.artifactUpdate.artifact.parts[0].text).join('')).toBe('Echo: hello')
      expect(stderr).toBe('')
    } else {
      // Nothing to stream: the whole answer as the one line, and a word on stderr that it was not streamed.
      expect(events).toHaveLength(1)
      expect(artifactText(events[0].task)).toBe('Echo: hello')
      expect(stderr).toMatch(/^Warning: .*no streaming/m)
    }
  })

  it('--async returns at once with the task and its ids while the task still works', async () => {
    const { send, url } = await start()
    const { code, stdout } = await send('wait', '--async', '-o', 'json')
    expect(code).toBe(0)
    const task = taskOf(stdout)
    expect(task.id).toBeTruthy()
    expect(task.contextId).toBeTruthy()
    expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(task.status.state)
    const text = await a2a(['send', '-a', url, '--transport', binding, 'wait', '--async'])
    expect(field(text.stdout, 'State')).toMatch(/^(SUBMITTED|WORKING)$/)
    expect(field(text.stdout, 'Follow')).toBe(`a2a task get --agent-card ${url} --wait ${field(text.stdout, 'Task')}`)
    for (const id of [task.id, field(text.stdout, 'Task')!])
      expect((await a2a(['task', 'cancel', '-a', url, id])).code).toBe(0)
  })

  it('stops at INPUT_REQUIRED with the resume command, which run as printed continues the same task', async () => {
    const { send } = await start()
    const asked = await send('ask')
    expect(asked.code).toBe(0)
    expect(field(asked.stdout, 'State')).toBe('INPUT_REQUIRED')
    expect(asked.stdout).toContain('Which city?')
    const taskId = field(asked.stdout, 'Task')!
    expect(asked.stderr).toMatch(new RegExp(`^Warning: task ${taskId} is waiting for your input`, 'm'))
    const resume = field(asked.stdout, 'Resume')!
    expect(resume).toMatch(/^a2a send --agent-card \S+ --task-id \S+ --text "<reply>"$/)

    // Run as printed, the placeholder filled in (the words are the shell's).
    const words = resume.replace('"<reply>"', 'Oslo').split(' ').slice(1)
    const answered = await a2a([...words, '--transport', binding])
    expect(answered.code).toBe(0)
    expect(field(answered.stdout, 'Task')).toBe(taskId)
    expect(field(answered.stdout, 'Context')).toBe(field(asked.stdout, 'Context'))
    expect(field(answered.stdout, 'State')).toBe('COMPLETED')
    expect(answered.stdout).toContain('Echo: Oslo')
  })

  it('a task that FAILED exits 0, the state in the output and a warning on stderr', async () => {
    const { send } = await start()
    const { code, stdout, stderr } = await send('fail')
    expect(code).toBe(0)
    expect(field(stdout, 'State')).toBe('FAILED')
    expect(stdout).toContain('No luck today')
    expect(stderr).toMatch(/^Warning: task [\w-]+ ended FAILED$/m)
  })

  it('an agent answering with a Message (no task) exits 0 and prints it', async () => {
    const { send } = await start()
    const text = await send('reply')
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^Message:\n {2}Hello from reply\n/m)
    const json = await send('reply', '-o', 'json')
    expect(json.code).toBe(0)
    expect(oneDocument(json.stdout).message.parts).toEqual([{ text: 'Hello from reply' }])
    const streamed = await send('reply', '--stream', '-o', 'json')
    expect(streamed.code).toBe(0)
    expect(jsonLines(streamed.stdout).at(-1).message.parts).toEqual([{ text: 'Hello from reply' }])
  })

  it('--task-id of an unknown task: TaskNotFoundError, exit 1, a hint naming --debug, and no new task', async () => {
    const { send, url } = await start()
    await send('hello')
    const before = oneDocument((await a2a(['task', 'list', '-a', url, '-o', 'json'])).stdout).tasks
    const json = await send('hello', '--task-id', 'no-such-task', '-o', 'json')
    expect(json.code).toBe(1)
    const { error } = oneDocument(json.stdout)
    expect(error.code).toBe('TaskNotFoundError')
    expect(error.hint).toContain('--debug')
    expect(error.hint).toContain('no new task')
    const text = await send('hello', '--task-id', 'no-such-task')
    expect(text.code).toBe(1)
    expect(text.stdout).toBe('')
    expect(text.stderr).toMatch(/^Code: TaskNotFoundError$/m)
    expect(text.stderr).toMatch(/^Hint: .*--debug/m)
    expectNoStack(text.stderr)
    const after = oneDocument((await a2a(['task', 'list', '-a', url, '-o', 'json'])).stdout).tasks
    expect(after.map((task: { id: string }) => task.id)).toEqual(before.map((task: { id: string }) => task.id))
  })

  it('--context-id starts a new task in that context', async () => {
    const { send } = await start()
    const first = taskOf((await send('hello', '-o', 'json')).stdout)
    const { code, stdout } = await send('again', '--context-id', first.contextId, '-o', 'json')
    expect(code).toBe(0)
    const second = taskOf(stdout)
    expect(second.contextId).toBe(first.contextId)
    expect(second.id).not.toBe(first.id)
    expect(artifactText(second)).toBe('Echo: again')
  })
})

describe('a2a send and what the caller asked for', () => {
  it('an answer whose task the renderers cannot show ends as one error, never a stack or half a task', async () => {
    const malformed = scriptedTask('t1', 'TASK_STATE_COMPLETED', { artifacts: [{ artifactId: 'a', parts: 'oops' }] })
    const agent = await startScriptedAgent(() => ({ result: { task: malformed } }))
    const text = await a2a(['send', '-a', agent.url, 'hi'])
    expect(text.code).toBe(1)
    expect(text.stdout).toBe('')
    expect(text.stderr).toMatch(/^Code: (InvalidAgentResponseError|A2ACLI_ERR_INTERNAL)$/m)
    expectNoStack(text.stderr)
    const json = await a2a(['send', '-a', agent.url, 'hi', '-o', 'json'])
    expect(json.code).toBe(1)
    expect(oneDocument(json.stdout).error.code).toMatch(/^(InvalidAgentResponseError|A2ACLI_ERR_INTERNAL)$/)
    expectNoStack(json.stderr)
  })

  it('--wait outranks A2ACLI_ASYNC=true: the message is sent to be waited for', async () => {
    const agent = await startScriptedAgent(() => ({ result: { task: scriptedTask('t1', 'TASK_STATE_COMPLETED') } }))
    const { code } = await a2a(['send', '-a', agent.url, 'hi', '--wait'], { env: { A2ACLI_ASYNC: 'true' } })
    expect(code).toBe(0)
    expect(agent.calls[0]!.params.configuration?.returnImmediately).toBeUndefined()
    // Unless a flag says otherwise, the variable holds.
    await a2a(['send', '-a', agent.url, 'hi'], { env: { A2ACLI_ASYNC: 'true' } })
    expect(agent.calls[1]!.params.configuration?.returnImmediately).toBe(true)
  })

  it('--stream outranks A2ACLI_ASYNC=true: the events, no usage error', async () => {
    const done = scriptedTask('t1', 'TASK_STATE_COMPLETED')
    const agent = await startScriptedAgent(
      (call) => (call.method === 'SendStreamingMessage' ? { events: [{ task: done }] } : { result: done }),
      { capabilities: { streaming: true } },
    )
    const { code, stdout } = await a2a(['send', '-a', agent.url, 'hi', '--stream', '-o', 'json'], {
      env: { A2ACLI_ASYNC: 'true' },
    })
    expect(jsonLines(stdout).at(-1).task.status.state).toBe('TASK_STATE_COMPLETED')
    expect(code).toBe(0)
    // Two flags asking for opposite things still are one.
    expect((await a2a(['send', '-a', agent.url, 'hi', '--stream', '--async'])).code).toBe(2)
  })

  it.each([
    ['an unknown flag', ['send', '--bogus', 'hi'], /unknown option '--bogus'/],
    ['a missing argument', ['task', 'get'], /missing required argument 'taskId'/],
  ])('-o json: %s is the usage error envelope on stdout, exit 2', async (_, args, message) => {
    for (const format of [['-o', 'json'], ['--output=json'], ['-ojson']]) {
      const { code, stdout, stderr } = await a2a([...args, ...format])
      const { error } = oneDocument(stdout)
      expect(error.code).toBe('A2ACLI_ERR_USAGE')
      expect(error.message).toMatch(message)
      expect(error.a2aCode).toBeNull()
      expect(stderr).not.toContain('Usage:')
      expect(code).toBe(2)
    }
    // In text, commander's own words and the command's help, as before.
    const text = await a2a(args)
    expect(text.code).toBe(2)
    expect(text.stdout).toBe('')
    expect(text.stderr).toMatch(message)
  })
})
