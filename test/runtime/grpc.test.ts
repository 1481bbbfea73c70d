import { TaskState } from '@a2a-js/sdk'
import { describe, expect, it } from 'vitest'
import { grpcAgent, grpcClient, sdkMessage, serveWithGrpc } from './_grpc.ts'

const text = (task: any) =>
  task.artifacts.flatMap((artifact: any) => artifact.parts.map((part: any) => part.content.value)).join('')

describe('gRPC binding through the official SDK 1.x client', () => {
  it('sends, streams, gets and lists', async () => {
    const target = await serveWithGrpc(grpcAgent())
    const client = await grpcClient(target.url)
    const sent: any = await client.sendMessage(sdkMessage('hello'))
    expect(sent.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(text(sent)).toBe('Echo: hello')
    const events: any[] = []
    for await (const event of client.sendMessageStream(sdkMessage('streamed words'))) events.push(event)
    const cases = events.map((event) => event.payload.$case)
    expect(cases[0]).toBe('task')
    expect(cases.filter((c) => c === 'artifactUpdate')).toHaveLength(3)
    expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
  })
})
