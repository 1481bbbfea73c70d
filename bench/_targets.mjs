// The three servers under test: how each is started, and the one logical request (a user message "hi" to the
// echo skill) in the shape each one accepts, with what a correct answer looks like.
//
// - ours: the platform dialect of a2a-runtime (slash-named methods, `kind` discriminators), the default of
//   a generated project.
// - sdk: @a2a-js/sdk 1.x speaks A2A v1.0 natively on JSON-RPC: PascalCase methods (`SendMessage`,
//   `SendStreamingMessage`), ProtoJSON shapes (`ROLE_USER`, parts without `kind`), and it requires the
//   `A2A-Version: 1.0` header (a request without it counts as v0.3, answered -32009 unless the optional
//   legacy-compat layer is enabled and the card declares 0.3). Its native path is the one measured.
// - ceiling: bare node:http; takes the platform shape.
// The binding rows (_bindings.mjs) send ours the v1.0 message over JSON-RPC (`v1`), HTTP+JSON (`v1Rest`) and gRPC.
import { fileURLToPath } from 'node:url'

export const TEXT = 'hi'
export const ECHOED = `Echo: ${TEXT}`
export const CARD_PATH = '/.well-known/agent-card.json'

const serversDir = fileURLToPath(new URL('./servers/', import.meta.url))
const json = { 'content-type': 'application/json' }
const platformMessage = { role: 'user', messageId: 'bench-message', parts: [{ kind: 'text', text: TEXT }] }
const v1Message = { role: 'ROLE_USER', messageId: 'bench-message', parts: [{ text: TEXT }] }
const rpc = (method, params) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })

export const platform = {
  send: { headers: json, body: rpc('message/send', { message: platformMessage }) },
  stream: {
    headers: { ...json, accept: 'text/event-stream' },
    body: rpc('message/stream', { message: platformMessage }),
  },
  // Substrings every load response must contain (checked on each response, cheaply).
  sendExpect: [`"${ECHOED}"`, '"state":"completed"'],
  streamExpect: { text: `"${ECHOED}"`, final: '"state":"completed"' },
  /** The full check, once before loading: the send answer is a completed task holding the echoed text. */
  checkSend(answer) {
    const task = answer?.result
    expectTask(task?.kind === 'task' && task.status?.state === 'completed', answer, 'a completed task')
    expectTask(artifactTexts(task, (part) => part.kind === 'text').includes(ECHOED), answer, `an artifact "${ECHOED}"`)
  },
  checkStream(events) {
    const last = events.at(-1)
    expectTask(
      last?.params?.status?.state === 'completed' && last.params.final === true,
      events,
      'a final completed status last',
    )
    const texts = events.flatMap((e) => e.params?.artifact?.parts ?? []).map((part) => part.text)
    expectTask(texts.includes(ECHOED), events, `an artifact event "${ECHOED}"`)
  },
}

/** A2A v1.0 over JSON-RPC (`POST /` with `A2A-Version: 1.0`). */
export const v1 = {
  send: { headers: { ...json, 'a2a-version': '1.0' }, body: rpc('SendMessage', { message: v1Message }) },
  stream: {
    headers: { ...json, 'a2a-version': '1.0', accept: 'text/event-stream' },
    body: rpc('SendStreamingMessage', { message: v1Message }),
  },
  sendExpect: [`"${ECHOED}"`, '"TASK_STATE_COMPLETED"'],
  streamExpect: { text: `"${ECHOED}"`, final: '"TASK_STATE_COMPLETED"' },
  checkSend(answer) {
    const task = answer?.result?.task
    expectTask(task?.status?.state === 'TASK_STATE_COMPLETED', answer, 'a TASK_STATE_COMPLETED task')
    expectTask(artifactTexts(task, () => true).includes(ECHOED), answer, `an artifact "${ECHOED}"`)
  },
  checkStream(events) {
    const last = events.at(-1)?.result
    expectTask(
      last?.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED',
      events,
      'a TASK_STATE_COMPLETED status last',
    )
    const texts = events.flatMap((e) => e.result?.artifactUpdate?.artifact?.parts ?? []).map((part) => part.text)
    expectTask(texts.includes(ECHOED), events, `an artifact event "${ECHOED}"`)
  },
}

// A2A v1.0 over HTTP+JSON (REST, §11): the same message as the body of POST /message:send and /message:stream, and
// the same answers bare, without JSON-RPC's envelope: a SendMessageResponse, and StreamResponses as SSE events.
const restBody = JSON.stringify({ message: v1Message })
export const v1Rest = {
  send: { path: '/message:send', headers: v1.send.headers, body: restBody },
  stream: { path: '/message:stream', headers: v1.stream.headers, body: restBody },
  sendExpect: v1.sendExpect,
  streamExpect: v1.streamExpect,
  checkSend: (answer) => v1.checkSend({ result: answer }),
  checkStream: (events) => v1.checkStream(events.map((result) => ({ result }))),
}

function artifactTexts(task, isText) {
  return (task?.artifacts ?? [])
    .flatMap((artifact) => artifact.parts ?? [])
    .filter(isText)
    .map((part) => part.text)
}

function expectTask(ok, got, what) {
  if (!ok) throw new Error(`expected ${what}, got ${JSON.stringify(got).slice(0, 800)}`)
}

/**
 * name → { label, dialect, command(project) → { command, args, cwd } }. `ours` needs the generated project
 * (see _project.mjs); the others are node scripts in bench/servers.
 */
export const targets = {
  ours: { name: 'ours', label: 'ours (a2a-runtime, generated echo agent)', dialect: platform },
  sdk: {
    name: 'sdk',
    label: '@a2a-js/sdk 1.3.0 + Express',
    dialect: v1,
    command: () => ({ command: process.execPath, args: [`${serversDir}sdk.mjs`], cwd: serversDir }),
  },
  ceiling: {
    name: 'ceiling',
    label: 'ceiling (bare node:http)',
    dialect: platform,
    command: () => ({ command: process.execPath, args: [`${serversDir}ceiling.mjs`], cwd: serversDir }),
  },
}

/** The server's count of the tasks it holds: ListTasks (A2A v1.0) answers `totalSize`. */
export const listTasksRequest = { headers: { ...json, 'a2a-version': '1.0' }, body: rpc('ListTasks', { pageSize: 1 }) }
