// What an adapter (a2a-runtime/ai-sdk, /mastra, /langgraph) costs per streamed chunk, against a hand-written
// `execute` that reads the same framework stream and writes the same chunks itself. Both agents run the same
// framework agent on the same mock model (CHUNKS chunks of text, no delay) in one process, served in-process
// (`app.fetch`, message/stream read to its end), in interleaved rounds: the CPU time of a round over its chunks.
// The difference is the adapter's own work: its event mapping, the conversation it reads from the store, the
// card and options; the framework's work is in both.
//
//   node bench/_adapters.mjs [--rounds 20] [--requests 40] [--json]   (run by bench/run.mjs on the server core)
import { parseArgs } from 'node:util'
import { SystemMessage } from '@langchain/core/messages'
import { MemorySaver } from '@langchain/langgraph'
import { createReactAgent } from '@langchain/langgraph/prebuilt'
import { Agent as MastraAgent } from '@mastra/core/agent'
import { createA2AApp, defineAgent } from 'a2a-runtime'
import { fromAiSdk } from 'a2a-runtime/ai-sdk'
import { fromLangGraph } from 'a2a-runtime/langgraph'
import { fromMastra } from 'a2a-runtime/mastra'
import { ToolLoopAgent } from 'ai'
import { fakeChatModel, mockLanguageModel } from './_mock-models.mjs'
import { geomeanInterval } from './_stats.mjs'

export const CHUNKS = 100

const silent = { debug() {}, info() {}, warn() {}, error() {} }
const card = { name: 'Bench', description: 'Streams a fixed answer' }
const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'message/stream',
  params: { message: { kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] } },
})

/** A hand-written execute: the text chunks of `stream` into one artifact, closed by an empty last chunk. */
function handWritten(textChunks) {
  return defineAgent({
    card,
    async execute(ctx, task) {
      let artifactId
      for await (const text of textChunks(ctx)) {
        artifactId = task.artifact(
          text,
          artifactId === undefined
            ? { name: 'answer', lastChunk: false }
            : { artifactId, append: true, lastChunk: false },
        )
      }
      task.artifact('', { artifactId, append: true, lastChunk: true })
      task.complete()
    },
    cancel() {},
  })
}

/** Each framework: its adapted agent and the hand-written one over the same framework agent. */
export function frameworks() {
  const aiSdkAgent = new ToolLoopAgent({ model: mockLanguageModel(CHUNKS), instructions: 'Bench' })
  const mastraAgent = new MastraAgent({
    id: 'bench',
    name: 'Bench',
    instructions: 'Bench',
    model: mockLanguageModel(CHUNKS),
  })
  const graph = createReactAgent({
    llm: fakeChatModel(CHUNKS),
    tools: [],
    checkpointer: new MemorySaver(),
    name: 'bench',
  })
  let thread = 0
  return [
    {
      name: 'ai-sdk',
      adapted: fromAiSdk(aiSdkAgent, { card }),
      handWritten: handWritten(async function* (ctx) {
        const result = await aiSdkAgent.stream({
          messages: [{ role: 'user', content: ctx.text }],
          abortSignal: ctx.signal,
        })
        for await (const part of result.fullStream) if (part.type === 'text-delta') yield part.text
      }),
    },
    {
      name: 'mastra',
      adapted: fromMastra(mastraAgent, { card }),
      handWritten: handWritten(async function* (ctx) {
        const output = await mastraAgent.stream([{ role: 'user', content: ctx.text }], { abortSignal: ctx.signal })
        for await (const chunk of output.fullStream) if (chunk.type === 'text-delta') yield chunk.payload.text
      }),
    },
    {
      name: 'langgraph',
      adapted: fromLangGraph(graph, { card }),
      handWritten: handWritten(async function* (ctx) {
        const stream = await graph.stream(
          { messages: [new SystemMessage('Bench'), { role: 'user', content: ctx.text }] },
          { streamMode: 'messages', signal: ctx.signal, configurable: { thread_id: `hand-${++thread}` } },
        )
        for await (const [message] of stream) if (message.getType() === 'ai' && message.text) yield message.text
      }),
    },
  ]
}

async function stream(app) {
  const response = await app.fetch(
    new Request('http://127.0.0.1/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', host: '127.0.0.1' },
      body,
    }),
  )
  const text = await response.text()
  if (!text.includes('"completed"')) throw new Error(`a stream did not complete: ${text.slice(0, 300)}`)
  return text
}

async function cpuPerRequest(app, requests) {
  const before = process.cpuUsage()
  for (let i = 0; i < requests; i++) await stream(app)
  const used = process.cpuUsage(before)
  return (used.user + used.system) / requests
}

/**
 * The rows: per framework, µs of CPU per chunk for both agents and the adapter's over the hand-written (paired rounds).
 */
export async function measureAdapters({ rounds = 20, requests = 40 } = {}) {
  const rows = {}
  for (const framework of frameworks()) {
    const apps = {
      adapted: createA2AApp(framework.adapted, { logger: silent }),
      handWritten: createA2AApp(framework.handWritten, { logger: silent }),
    }
    // Both answer the same chunks, checked once: the comparison is of equal work.
    const chunksOf = (text) => (text.match(/"artifact-update"|artifactUpdate/g) ?? []).length
    const [a, h] = [await stream(apps.adapted), await stream(apps.handWritten)]
    if (chunksOf(a) !== chunksOf(h))
      throw new Error(
        `${framework.name}: the adapter streamed ${chunksOf(a)} chunks, the hand-written agent ${chunksOf(h)}`,
      )
    for (const app of Object.values(apps)) for (let i = 0; i < requests; i++) await stream(app) // warm-up
    const perChunk = { adapted: [], handWritten: [] }
    const ratios = []
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 ? ['handWritten', 'adapted'] : ['adapted', 'handWritten']
      const cost = {}
      for (const name of order) cost[name] = (await cpuPerRequest(apps[name], requests)) / CHUNKS
      perChunk.adapted.push(cost.adapted)
      perChunk.handWritten.push(cost.handWritten)
      ratios.push(cost.adapted / cost.handWritten)
    }
    const geomean = Math.exp(ratios.reduce((sum, r) => sum + Math.log(r), 0) / ratios.length)
    const median = (values) => [...values].sort((x, y) => x - y)[values.length >> 1]
    rows[framework.name] = {
      chunksPerStream: CHUNKS,
      handWrittenUsPerChunk: median(perChunk.handWritten),
      adaptedUsPerChunk: median(perChunk.adapted),
      ratio: geomean,
      interval: geomeanInterval(ratios),
      rounds: ratios,
    }
    for (const app of Object.values(apps)) await app.close()
  }
  return rows
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '20' },
      requests: { type: 'string', default: '40' },
      json: { type: 'boolean', default: false },
    },
  })
  const rows = await measureAdapters({ rounds: Number(values.rounds), requests: Number(values.requests) })
  if (values.json) console.log(JSON.stringify(rows))
  else
    for (const [name, row] of Object.entries(rows)) {
      console.log(
        `${name}: hand-written ${row.handWrittenUsPerChunk.toFixed(1)} µs/chunk, adapter ${row.adaptedUsPerChunk.toFixed(1)} µs/chunk, adapter/hand-written ${row.ratio.toFixed(3)} (95% interval ${row.interval.map((r) => r.toFixed(3)).join('–')})`,
      )
    }
  process.exit(0)
}
