// How long an event takes to reach a client that follows the task on another instance. Per sample:
//   1. SendStreamingMessage "follow <delayMs>" on instance A: the agent runs there; A's stream is read live;
//   2. SubscribeToTask on instance B as soon as A's stream names the task; B answers the Task as it stands;
//   3. after delayMs the agent (on A) emits one artifact carrying its emission time (ms since the epoch);
//   4. the artifact event arrives on A's stream (local delivery: the runtime hands it to A's listeners as it
//      is emitted, without waiting for the store) and on B's (through Redis: A's write and publish, B's
//      subscriber, B's stream).
// Reported: B's arrival minus A's arrival (one clock, this process's: what crossing instances adds to a local
// stream), and the emission to each arrival (the agent's clock against this process's: both read the same
// system clock, so these are good to a fraction of a millisecond). A sample where B's subscription was not
// confirmed before the emission, or whose Task already held the artifact, is not counted but reported.
import { performance } from 'node:perf_hooks'
import { openSse } from './_sse.mjs'
import { Samples } from './_stats.mjs'

const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' }
const rpc = (method, params) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })

/** Reads a stream until its artifact event (its first), then to its end; checks it ends completed. */
async function untilArtifact(stream, where) {
  let artifact
  let last
  for (let event = await stream.next(); event; event = await stream.next()) {
    const result = event.data.result
    if (!result) throw new Error(`${where}: the stream carried an error: ${JSON.stringify(event.data).slice(0, 300)}`)
    if (result.artifactUpdate && !artifact)
      artifact = { at: event.at, text: result.artifactUpdate.artifact.parts[0].text }
    last = result
  }
  if (!artifact)
    throw new Error(`${where}: the stream ended without the artifact: ${JSON.stringify(last).slice(0, 300)}`)
  if (last?.statusUpdate?.status?.state !== 'TASK_STATE_COMPLETED')
    throw new Error(`${where}: the stream did not end completed: ${JSON.stringify(last).slice(0, 300)}`)
  return artifact
}

async function sample(a, b, delayMs) {
  const onA = openSse(a.url, {
    headers,
    body: rpc('SendStreamingMessage', {
      message: { role: 'ROLE_USER', messageId: 'follow', parts: [{ text: `follow ${delayMs}` }] },
    }),
  })
  const first = await onA.next()
  const taskId = first?.data?.result?.task?.id ?? first?.data?.result?.statusUpdate?.taskId
  if (!taskId) throw new Error(`A's stream named no task: ${JSON.stringify(first?.data).slice(0, 300)}`)
  const onB = openSse(b.url, { headers, body: rpc('SubscribeToTask', { id: taskId }) })
  const snapshot = await onB.next()
  const task = snapshot?.data?.result?.task
  if (!task)
    throw new Error(`B's subscription did not start with the Task: ${JSON.stringify(snapshot?.data).slice(0, 300)}`)
  const [viaA, viaB] = await Promise.all([untilArtifact(onA, 'A'), untilArtifact(onB, 'B')])
  await Promise.all([onA.ended, onB.ended])
  if (viaA.text !== viaB.text) throw new Error(`A and B delivered different artifacts: ${viaA.text} / ${viaB.text}`)
  // The agent's clock, as a time of this process's performance.now().
  const emitted = Number(viaA.text) - performance.timeOrigin
  const late = snapshot.at > emitted || (task.artifacts ?? []).length > 0
  return { late, crossMinusLocal: viaB.at - viaA.at, emitToB: viaB.at - emitted, emitToA: viaA.at - emitted }
}

/** `samples` tasks one after another; resolves with each figure's { p50, p99, mean, max } and the late count. */
export async function followLatency(a, b, { samples, warmup = 3, delayMs = 150 }) {
  const figures = { crossMinusLocal: new Samples(), emitToB: new Samples(), emitToA: new Samples() }
  let late = 0
  for (let i = 0; i < warmup + samples; i++) {
    const s = await sample(a, b, delayMs)
    if (i < warmup) continue
    if (s.late) {
      late++
      continue
    }
    for (const key of Object.keys(figures)) figures[key].push(s[key])
  }
  return {
    ...Object.fromEntries(Object.entries(figures).map(([key, s]) => [key, s.summary()])),
    counted: figures.emitToB.length,
    late,
    delayMs,
  }
}
