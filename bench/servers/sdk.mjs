// The official @a2a-js/sdk (1.x) server, as its README wires it: DefaultRequestHandler + the default
// InMemoryTaskStore, behind Express with the SDK's jsonRpcHandler and agentCardHandler. The executor does
// what our echo template does: working (with a progress message), one text artifact "<skill>: <text>",
// completed. Started by bench/run.mjs with PORT and HOST; nothing here is tuned beyond the README.
import { randomUUID } from 'node:crypto'
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server'
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express'
import express from 'express'

const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '127.0.0.1'
const url = `http://${host}:${port}/`
const skillName = 'Echo'

// The SDK's internal (protobuf-shaped) values: numeric enums, parts as { content: { $case, value } }.
const TASK_STATE_SUBMITTED = 1
const TASK_STATE_WORKING = 2
const TASK_STATE_COMPLETED = 3
const ROLE_AGENT = 2

// The same card as the generated echo agent, in the v1.0 shape this SDK serves. The JSON-RPC interface
// declares protocolVersion 1.0: the SDK rejects any request whose A2A-Version is not declared here, and a
// request without the header counts as 0.3 (served only through its optional legacy-compat layer).
const card = {
  name: 'Bench Agent',
  description: 'An A2A agent built with the official SDK for the benchmark',
  supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
  version: '0.1.0',
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'echo',
      name: skillName,
      description: 'Repeats your message back',
      tags: ['echo'],
      examples: ['Hello there!'],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    },
  ],
  signatures: [],
}

const textPart = (value) => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
})

class EchoExecutor {
  async execute(context, bus) {
    const { taskId, contextId, userMessage } = context
    // The SDK requires a Task (or a Message) as the first event of every execution.
    if (!context.task) {
      const status = { state: TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() }
      bus.publish(
        AgentEvent.task({ id: taskId, contextId, status, artifacts: [], history: [userMessage], metadata: undefined }),
      )
    }
    const progress = {
      messageId: randomUUID(),
      contextId,
      taskId,
      role: ROLE_AGENT,
      parts: [textPart(`${skillName} is on it…`)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    }
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TASK_STATE_WORKING, message: progress, timestamp: new Date().toISOString() },
        metadata: undefined,
      }),
    )
    const said = userMessage.parts
      .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
      .join('')
      .trim()
    const artifact = {
      artifactId: randomUUID(),
      name: '',
      description: '',
      parts: [textPart(said ? `${skillName}: ${said}` : `${skillName}: you sent no text.`)],
      metadata: undefined,
      extensions: [],
    }
    bus.publish(
      AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined }),
    )
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() },
        metadata: undefined,
      }),
    )
    // No bus.finished(): in 1.x the request handler settles the bus itself once execute() resolves.
  }

  async cancelTask() {}
}

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new EchoExecutor())
const app = express()
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }))
app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }))

const server = app.listen(port, host, () => console.log(`[sdk] listening on ${url}`))
// Ended by the bench with SIGTERM: close at once (no graceful drain to measure here).
process.once('SIGTERM', () => {
  server.closeAllConnections?.()
  server.close(() => process.exit(0))
})
