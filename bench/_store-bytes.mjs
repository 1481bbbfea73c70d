// What a store writes for one large streamed answer: a 1 MiB message (SendStreamingMessage, A2A v1.0) echoed
// back by the agent as one artifact in `chunks` chunks (BENCH_CHUNKS). Measured on the way to the store:
//   Redis: `total_net_input_bytes` of the store's redis-server across the send (every command the server sent:
//          writes, publishes to followers, lease renewals), less the bench's own INFO commands;
//   PostgreSQL: the WAL the cluster wrote across the send (`pg_wal_lsn_diff` of the insert position before and
//          after: every commit's WAL reaches the disk before it is acknowledged, heap and index pages follow at
//          checkpoints), with `pg_waldump --stats` of that WAL (records and full-page images by kind); besides,
//          the bytes the agent sent PostgreSQL (its `wchar` less the answer on its socket: statements and their
//          values) and how much the schema's tables, TOAST and indexes grew;
//   file:  the server's `wchar` (/proc/<pid>/io: bytes passed to write calls) across the send, less the bytes of
//          the answer on the socket (the client's count of what it received, headers and framing included),
//          and the task's records in the store's log once it has ended.
// The answer is checked: every chunk arrives, in order, and the completed task holds the whole text.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { postJson } from './_http.mjs'
import { lsnNumber } from './_postgres.mjs'
import { openSse } from './_sse.mjs'

const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' }
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Bytes the process has passed to write(2) and friends, files and sockets alike. */
function wchar(pid) {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8')
  return Number(/^wchar:\s*(\d+)/m.exec(io)[1])
}

/**
 * Waits until `read()` grows by no more than `own` (what reading it adds) for `quietMs`: the writes that
 * follow the answer have landed. Resolves with the last reading.
 */
async function settled(read, { own = 0, quietMs = 300, timeoutMs = 10_000 } = {}) {
  const deadline = Date.now() + timeoutMs
  let last = await read()
  for (;;) {
    await pause(quietMs)
    const now = await read()
    if (now - last <= own) return now
    if (Date.now() > deadline) throw new Error(`the store went on writing for ${timeoutMs} ms after the answer`)
    last = now
  }
}

/** A text of `bytes` ASCII characters that no two chunks repeat (a store that shares chunks gains nothing). */
export function bigText(bytes) {
  let text = ''
  for (let i = 0; text.length < bytes; i++) text += `${i.toString(36).padStart(8, '0')} `
  return text.slice(0, bytes)
}

/** Sends the text and reads the whole answer; checks it; resolves with the task's id and the bytes received. */
async function sendAndCheck(url, text, chunks) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendStreamingMessage',
    params: { message: { role: 'ROLE_USER', messageId: 'bytes-1', parts: [{ text }] } },
  })
  const stream = openSse(url, { headers, body }, 120_000)
  let taskId
  let echoed = ''
  let artifactEvents = 0
  let last
  for (let event = await stream.next(); event; event = await stream.next()) {
    const result = event.data.result
    if (!result) throw new Error(`the stream carried an error: ${JSON.stringify(event.data).slice(0, 300)}`)
    taskId ??= result.task?.id ?? result.statusUpdate?.taskId ?? result.artifactUpdate?.taskId
    if (result.artifactUpdate) {
      artifactEvents++
      echoed += result.artifactUpdate.artifact.parts.map((part) => part.text).join('')
    }
    last = result
  }
  const { bytesRead } = await stream.ended
  if (last?.statusUpdate?.status?.state !== 'TASK_STATE_COMPLETED')
    throw new Error(`the stream did not end completed: ${JSON.stringify(last).slice(0, 300)}`)
  if (artifactEvents !== chunks || echoed !== text)
    throw new Error(
      `the echo came back wrong: ${artifactEvents} chunks of ${chunks}, ${echoed.length} characters of ${text.length}`,
    )
  return { taskId, bytesRead }
}

/** Once measured: the store gives the task back completed, with the whole text. */
async function checkStored(url, taskId, text) {
  const got = await postJson(url, {
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: taskId } }),
  })
  const stored = (got.result?.artifacts ?? [])
    .flatMap((artifact) => artifact.parts)
    .map((part) => part.text)
    .join('')
  if (got.result?.status?.state !== 'TASK_STATE_COMPLETED' || stored !== text)
    throw new Error(
      `GetTask after the stream: ${got.result?.status?.state}, ${stored.length} characters of ${text.length}`,
    )
}

/** The Redis measure: `redis` from _redis.mjs, `server` the agent on it. */
export async function redisBytes(server, redis, { text, chunks }) {
  // Each INFO adds its own command to the count: known, and taken off.
  let reads = 0
  const input = async () => {
    reads++
    return (await redis.info('stats')).total_net_input_bytes
  }
  const own = Buffer.byteLength(redis.infoCommand('stats'))
  const before = await settled(input, { own })
  const readsBefore = reads
  const { taskId, bytesRead } = await sendAndCheck(server.url, text, chunks)
  const after = await settled(input, { own })
  await checkStored(server.url, taskId, text)
  return { written: after - before - (reads - readsBefore) * own, answerBytes: bytesRead }
}

/** The PostgreSQL measure: `pg` from _postgres.mjs, `server` the agent on it, its tables in `schema`. */
export async function postgresBytes(server, pg, { text, chunks, schema = 'a2a' }) {
  const position = async () => lsnNumber(await pg.walLsn())
  await settled(position)
  const fromLsn = await pg.walLsn()
  const wireBefore = await settled(() => wchar(server.pid))
  const tablesBefore = await pg.relationBytes(schema)
  const { taskId, bytesRead } = await sendAndCheck(server.url, text, chunks)
  await settled(position)
  const toLsn = await pg.walLsn()
  const wireAfter = await settled(() => wchar(server.pid))
  await checkStored(server.url, taskId, text)
  return {
    written: await pg.walBytesBetween(fromLsn, toLsn),
    wal: pg.walStats(fromLsn, toLsn),
    sentToPostgres: wireAfter - wireBefore - bytesRead,
    tablesGrew: (await pg.relationBytes(schema)) - tablesBefore,
    answerBytes: bytesRead,
  }
}

/** The file store measure: `dir` the store's directory, `server` the agent on it. */
export async function fileBytes(server, dir, { text, chunks }) {
  const before = await settled(() => wchar(server.pid))
  const { taskId, bytesRead } = await sendAndCheck(server.url, text, chunks)
  const after = await settled(() => wchar(server.pid))
  await checkStored(server.url, taskId, text)
  const records = taskRecords(join(dir, 'log'), taskId)
  return {
    written: after - before - bytesRead,
    answerBytes: bytesRead,
    wcharDelta: after - before,
    records: records.map((record) => record.kind),
    recordsBytes: records.reduce((sum, record) => sum + record.bytes, 0),
  }
}

/**
 * The task's records in the file store's log (`<dir>/log/<n>.jsonl`, one JSON record a line): their kinds and sizes.
 */
function taskRecords(logDir, taskId) {
  const start = `{"t":${JSON.stringify(taskId)},`
  const records = []
  for (const name of readdirSync(logDir)
    .filter((file) => file.endsWith('.jsonl'))
    .sort()) {
    for (const line of readFileSync(join(logDir, name), 'utf8').split('\n')) {
      if (!line.startsWith(start)) continue
      const record = JSON.parse(line)
      records.push({
        kind: 'snapshot' in record ? 'snapshot' : 'entries' in record ? 'entries' : 'dropped',
        bytes: Buffer.byteLength(line) + 1,
      })
    }
  }
  return records
}
