import { request as httpRequest } from 'node:http'
import { describe, expect, it } from 'vitest'
import { agent, chunkedAgent, echoAgent, progressAgent } from './_agents.ts'
import { userMessage } from './_messages.ts'
import { eventReader, readEvents } from './_sse.ts'
import { nodeServer, transports } from './_transports.ts'

describe.each(transports)('platform protocol ($name)', (transport) => {
  describe('agent card', () => {
    it('serves every required field at /.well-known/agent.json with the real address as url', async () => {
      const target = await transport.start(echoAgent)
      const response = await target.fetch('/.well-known/agent.json')
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('application/json')
      const card = await response.json()
      expect(card).toMatchObject({
        name: 'Test Agent',
        description: 'An agent for the protocol suite',
        url: target.url,
        version: '1.2.3',
        capabilities: { streaming: true, pushNotifications: false },
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [{ id: 'echo', name: 'Echo', description: 'Repeats the message', tags: ['test'], examples: ['hello'] }],
      })
      expect(card.supportedInterfaces).toEqual([{ url: target.url, protocolBinding: 'JSONRPC', transport: 'JSONRPC' }])
    })

    it('advertises the configured public url instead of the listening address', async () => {
      const target = await transport.start(echoAgent, { publicUrl: 'https://agents.example.com/echo/' })
      const card = await (await target.fetch('/.well-known/agent.json')).json()
      expect(card.url).toBe('https://agents.example.com/echo/')
      expect(card.supportedInterfaces[0].url).toBe('https://agents.example.com/echo/')
    })
  })

  describe('message/send', () => {
    it('returns the completed task with the answer in an artifact', async () => {
      const target = await transport.start(echoAgent)
      const reply = await target.rpc('message/send', userMessage('hello'), { id: 'send-1' })
      expect(reply.status).toBe(200)
      expect(reply.body.jsonrpc).toBe('2.0')
      expect(reply.body.id).toBe('send-1')
      const task = reply.body.result
      expect(task).toMatchObject({ kind: 'task', status: { state: 'completed' } })
      expect(task.artifacts).toHaveLength(1)
      expect(task.artifacts[0].parts).toEqual([{ kind: 'text', text: 'Echo: hello' }])
      expect(typeof task.artifacts[0].artifactId).toBe('string')
      expect(typeof task.id).toBe('string')
      expect(typeof task.contextId).toBe('string')
      expect(task.history[0]).toMatchObject({
        kind: 'message',
        role: 'user',
        taskId: task.id,
        contextId: task.contextId,
      })
    })

    it('answers a numeric request id with the same number', async () => {
      const target = await transport.start(echoAgent)
      const reply = await target.rpc('message/send', userMessage('hi'), { id: 42 })
      expect(reply.body.id).toBe(42)
    })

    it('generates task, context and artifact ids on the server', async () => {
      const target = await transport.start(echoAgent)
      const a = (await target.rpc('message/send', userMessage('a'))).body.result
      const b = (await target.rpc('message/send', userMessage('b'))).body.result
      expect(a.id).not.toBe(b.id)
      expect(a.contextId).not.toBe(b.contextId)
      expect(a.artifacts[0].artifactId).not.toBe(b.artifacts[0].artifactId)
    })

    it('takes the contextId from params.metadata.contextId, else from the message', async () => {
      const target = await transport.start(echoAgent)
      const fromMetadata = await target.rpc('message/send', {
        ...userMessage('x', { contextId: 'from-message' }),
        metadata: { contextId: 'ctx-meta' },
      })
      expect(fromMetadata.body.result.contextId).toBe('ctx-meta')
      const fromMessage = await target.rpc('message/send', userMessage('x', { contextId: 'ctx-message' }))
      expect(fromMessage.body.result.contextId).toBe('ctx-message')
    })

    it('refuses, with -32602 naming the part and the types taken, a part of a media type the card does not take (message/send and message/stream), and runs nothing', async () => {
      let ran = false
      const target = await transport.start(
        agent((_ctx, task) => {
          ran = true
          task.complete()
        }),
      )
      const image = { kind: 'file', file: { bytes: 'aGVsbG8=', mimeType: 'image/png', name: 'a.png' } }
      for (const method of ['message/send', 'message/stream']) {
        const reply = await target.rpc(method, {
          message: { role: 'user', messageId: 'm', parts: [{ kind: 'text', text: 'look' }, image] },
        })
        expect(reply.body.error).toMatchObject({
          code: -32602,
          message: expect.stringMatching(/params\.message\.parts\[1\]. is image\/png.*takes text\/plain/),
        })
      }
      const data = await target.rpc('message/send', {
        message: { role: 'user', messageId: 'm', parts: [{ kind: 'data', data: { a: 1 } }] },
      })
      expect(data.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('application/json') })
      expect(ran).toBe(false)
    })

    it("joins the message's text parts in order as the user's text", async () => {
      const echoTakingData = agent(
        (ctx, task) => {
          task.artifact(`Echo: ${ctx.text}`)
          task.complete()
        },
        { card: { defaultInputModes: ['text/plain', 'application/json'] } },
      )
      const target = await transport.start(echoTakingData)
      const reply = await target.rpc('message/send', {
        message: {
          role: 'user',
          messageId: 'm',
          parts: [
            { kind: 'text', text: 'one ' },
            { kind: 'data', data: { ignored: true } },
            { kind: 'text', text: 'two' },
          ],
        },
      })
      expect(reply.body.result.artifacts[0].parts[0].text).toBe('Echo: one two')
    })

    it('serves the same JSON-RPC endpoint at POST /jsonrpc', async () => {
      const target = await transport.start(echoAgent)
      const reply = await target.rpc('message/send', userMessage('alias'), { path: '/jsonrpc' })
      expect(reply.body.result.status.state).toBe('completed')
    })

    it('returns at once with configuration.blocking false, and the task finishes later', async () => {
      const target = await transport.start(progressAgent)
      const reply = await target.rpc('message/send', { ...userMessage('later'), configuration: { blocking: false } })
      expect(reply.body.result.status.state).toBe('working')
      await expect
        .poll(async () => (await target.rpc('tasks/get', { id: reply.body.result.id })).body.result.status.state)
        .toBe('completed')
    })

    it('honours configuration.historyLength in the answer', async () => {
      const target = await transport.start(echoAgent)
      const reply = await target.rpc('message/send', { ...userMessage('short'), configuration: { historyLength: 0 } })
      expect(reply.body.result.history).toEqual([])
      expect((await target.rpc('tasks/get', { id: reply.body.result.id })).body.result.history).toHaveLength(1)
    })

    it('refuses with -32005, without running the agent, when the client accepts none of the output modes', async () => {
      let ran = false
      const target = await transport.start(
        agent((_ctx, task) => {
          ran = true
          task.complete()
        }),
      )
      const refused = await target.rpc('message/send', {
        ...userMessage('x'),
        configuration: { acceptedOutputModes: ['image/png'] },
      })
      expect(refused.body.error.code).toBe(-32005)
      expect(refused.body.error.message).toContain('image/png')
      expect(ran).toBe(false)
      const accepted = await target.rpc('message/send', {
        ...userMessage('x'),
        configuration: { acceptedOutputModes: ['application/json', 'text/*'] },
      })
      expect(accepted.body.result.status.state).toBe('completed')
    })

    it('keeps 200 concurrent sends apart: unique ids, each with its own answer', async () => {
      const target = await transport.start(progressAgent)
      const replies = await Promise.all(
        Array.from({ length: 200 }, (_, i) => target.rpc('message/send', userMessage(`n${i}`), { id: i })),
      )
      const ids = new Set(replies.map((r) => r.body.result.id))
      expect(ids.size).toBe(200)
      replies.forEach((reply, i) => {
        expect(reply.body.id).toBe(i)
        expect(reply.body.result.status.state).toBe('completed')
        expect(reply.body.result.artifacts[0].parts[0].text).toBe(`Answer: n${i}`)
      })
    })
  })

  describe('tasks/get', () => {
    it('returns the stored task', async () => {
      const target = await transport.start(echoAgent)
      const sent = (await target.rpc('message/send', userMessage('keep me'))).body.result
      const reply = await target.rpc('tasks/get', { id: sent.id }, { id: 'get-1' })
      expect(reply.body.id).toBe('get-1')
      expect(reply.body.result).toEqual(sent)
    })

    it('trims the history to historyLength', async () => {
      const target = await transport.start(echoAgent)
      const sent = (await target.rpc('message/send', userMessage('one'))).body.result
      expect((await target.rpc('tasks/get', { id: sent.id, historyLength: 0 })).body.result.history).toEqual([])
      expect((await target.rpc('tasks/get', { id: sent.id, historyLength: 5 })).body.result.history).toHaveLength(1)
    })

    it('answers an unknown task with -32602 "Task not found" and the request id', async () => {
      const target = await transport.start(echoAgent)
      const reply = await target.rpc('tasks/get', { id: 'no-such-task' }, { id: 'missing' })
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({ jsonrpc: '2.0', id: 'missing', error: { code: -32602, message: 'Task not found' } })
    })
  })

  describe('message/stream', () => {
    it('sends the spec headers and frames each event exactly as data: <json> and a blank line', async () => {
      const target = await transport.start(progressAgent)
      const response = await target.post(
        JSON.stringify({ jsonrpc: '2.0', id: 's1', method: 'message/stream', params: userMessage('stream me') }),
      )
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('text/event-stream')
      expect(response.headers.get('cache-control')).toBe('no-cache')
      if (transport.name === 'in-process') expect(response.headers.get('connection')).toBe('keep-alive')
      const { raw, events } = await readEvents(response)
      expect(raw.endsWith('\n\n')).toBe(true)
      expect(events.length).toBeGreaterThanOrEqual(3)
    })

    it('sends JSON-RPC notifications in the order the agent produced them, working first and the final status last', async () => {
      const target = await transport.start(progressAgent)
      const response = await target.post(
        JSON.stringify({ jsonrpc: '2.0', id: 's2', method: 'message/stream', params: userMessage('order') }),
      )
      const { events } = await readEvents(response)
      for (const event of events) {
        expect(event.jsonrpc).toBe('2.0')
        expect(event).not.toHaveProperty('id')
        expect(typeof event.params.taskId).toBe('string')
        expect(typeof event.params.contextId).toBe('string')
      }
      const summary = events.map((e) =>
        e.method === 'tasks/statusUpdate'
          ? `status:${e.params.status.state}`
          : `artifact:${e.params.artifact.parts[0].text}`,
      )
      expect(summary).toEqual(['status:working', 'status:working', 'artifact:Answer: order', 'status:completed'])
      expect(events[1].params.status.message.parts[0].text).toBe('Looking it up…')
      const taskIds = new Set(events.map((e) => e.params.taskId))
      expect(taskIds.size).toBe(1)

      // The streamed task is the stored task.
      const stored = (await target.rpc('tasks/get', { id: events[0].params.taskId })).body.result
      expect(stored.status.state).toBe('completed')
      expect(stored.artifacts[0].artifactId).toBe(events[2].params.artifact.artifactId)
    })

    it('streams chunked artifacts with append and lastChunk, and stores them joined', async () => {
      const target = await transport.start(chunkedAgent)
      const { events } = await readEvents(
        await target.post(
          JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: userMessage('x') }),
        ),
      )
      const artifacts = events.filter((e) => e.method === 'tasks/artifactUpdate').map((e) => e.params)
      expect(artifacts.map((a) => [a.artifact.parts[0].text, a.append ?? false, a.artifact.lastChunk])).toEqual([
        ['Hel', false, false],
        ['lo', true, false],
        ['!', true, true],
      ])
      expect(new Set(artifacts.map((a) => a.artifact.artifactId)).size).toBe(1)
      const stored = (await target.rpc('tasks/get', { id: artifacts[0].taskId })).body.result
      expect(stored.artifacts).toHaveLength(1)
      expect(stored.artifacts[0].parts.map((p: { text: string }) => p.text).join('')).toBe('Hello!')
      expect(stored.artifacts[0].lastChunk).toBe(true)
    })

    it('answers a JSON-RPC error, not a stream, when the card says streaming is off', async () => {
      const target = await transport.start(
        agent((_c, t) => t.complete(), { card: { capabilities: { streaming: false } } }),
      )
      const reply = await target.rpc('message/stream', userMessage('x'), { id: 'no-stream' })
      expect(reply.headers.get('content-type')).toBe('application/json')
      expect(reply.body.id).toBe('no-stream')
      expect(reply.body.error.code).toBe(-32004)
      expect(reply.body.error.message).toMatch(/streaming/i)
    })

    it('lets a client leave mid-stream: the task still finishes, stays retrievable, and the server keeps answering', async () => {
      let finish!: () => void
      const paused = new Promise<void>((resolve) => (finish = resolve))
      const slow = agent(async (_ctx, task) => {
        task.working('first')
        await paused
        task.artifact('done anyway')
        task.complete()
      })
      const target = await transport.start(slow)
      const controller = new AbortController()
      const response = await target.fetch('/', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: userMessage('bye') }),
        signal: controller.signal,
      })
      const events = eventReader(response)
      const first = await events.next()
      expect(first.params.status.state).toBe('working')
      const taskId = first.params.taskId
      if (transport.name === 'in-process') await events.cancel()
      else controller.abort()
      finish()
      await expect
        .poll(async () => (await target.rpc('tasks/get', { id: taskId })).body.result.status.state)
        .toBe('completed')
      const task = (await target.rpc('tasks/get', { id: taskId })).body.result
      expect(task.artifacts[0].parts[0].text).toBe('done anyway')
      expect(target.logger.text('error')).toBe('')
      expect((await target.rpc('message/send', userMessage('still here'))).body.result.status.state).toBe('completed')
    })
  })
})

describe('SSE on the wire (node-server)', () => {
  it('sends the spec headers and the exact event bytes over a real socket', async () => {
    const target = await nodeServer.start(progressAgent)
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 'raw',
      method: 'message/stream',
      params: userMessage('raw bytes'),
    })
    const { headers, raw } = await new Promise<{ headers: Record<string, unknown>; raw: string }>((resolve, reject) => {
      const req = httpRequest(
        target.url,
        { method: 'POST', headers: { 'content-type': 'application/json' } },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => resolve({ headers: res.headers, raw: Buffer.concat(chunks).toString('utf8') }))
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      req.end(body)
    })
    expect(headers['content-type']).toBe('text/event-stream')
    expect(headers['cache-control']).toBe('no-cache')
    expect(headers.connection).toBe('keep-alive')
    const frames = raw.split('\n\n')
    expect(frames.pop()).toBe('')
    for (const frame of frames)
      expect(frame).toMatch(
        /^data: \{"jsonrpc":"2\.0","method":"tasks\/(statusUpdate|artifactUpdate)","params":\{.*\}\}$/,
      )
    const last = JSON.parse(frames.at(-1)!.slice(6))
    expect(last.params.status.state).toBe('completed')
  })
})
