// What every ceiling answers, as strings, whatever serves them (node:http in ceiling.mjs, Bun.serve or Deno.serve
// in ceiling-fetch.mjs, a Worker's fetch handler in worker-ceiling.mjs), so their bytes on the wire are the
// same: JSON.parse of the request, and JSON.stringify of a result shaped like our runtime's (a completed task with
// the echoed artifact). message/stream answers `streamEvents` `data:` events (the count our runtime sends,
// measured by the bench). No framework, validation, task lifecycle or store.

/** A small card; `url` is where the ceiling is served. */
export function ceilingCard(url, description) {
  return JSON.stringify({
    name: 'Ceiling',
    description,
    url,
    version: '0.1.0',
    capabilities: { streaming: true },
    skills: [],
  })
}

/**
 * `answer(body)` → { stream, body }: the JSON-RPC answer to a POSTed body (a parse error for one that is not
 * JSON), `stream` true when it is an event stream. `randomUUID` is the runtime's own (node:crypto on Node).
 */
export function ceilingAnswers({ randomUUID, streamEvents }) {
  const textOf = (message) =>
    (message?.parts ?? [])
      .map((part) => (part?.kind === 'text' ? part.text : ''))
      .join('')
      .trim()

  function task(message, state) {
    const id = randomUUID()
    const contextId = randomUUID()
    return {
      kind: 'task',
      id,
      contextId,
      status: { state, timestamp: new Date().toISOString() },
      artifacts: [
        { artifactId: randomUUID(), parts: [{ kind: 'text', text: `Echo: ${textOf(message)}` }], lastChunk: true },
      ],
      history: [{ ...message, taskId: id, contextId }],
    }
  }

  function stream(rpc) {
    const { id: taskId, contextId, artifacts } = task(rpc.params?.message, 'working')
    const event = (params, method = 'tasks/statusUpdate') =>
      `data: ${JSON.stringify({ jsonrpc: '2.0', method, params })}\n\n`
    const status = (state, final) =>
      event({ taskId, contextId, status: { state, timestamp: new Date().toISOString() }, final })
    // working … working, the artifact, then the final completed status: streamEvents events in all, sent as one
    // chunk (the least a server can do; our runtime also sends the events of one synchronous run at once).
    let events = ''
    for (let i = 0; i < streamEvents - 2; i++) events += status('working', false)
    events += event({ taskId, contextId, artifact: artifacts[0] }, 'tasks/artifactUpdate')
    return events + status('completed', true)
  }

  return {
    answer(body) {
      let rpc
      try {
        rpc = JSON.parse(body)
      } catch {
        return {
          stream: false,
          body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }),
        }
      }
      if (rpc.method === 'message/stream') return { stream: true, body: stream(rpc) }
      return {
        stream: false,
        body: JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result: task(rpc.params?.message, 'completed') }),
      }
    },
  }
}

/** BENCH_STREAM_EVENTS as a count (4 when unset): the artifact and the final status at least. */
export const streamEventsOf = (value) => Math.max(2, Number(value ?? 4))
