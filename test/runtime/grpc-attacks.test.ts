import { type ChildProcess, spawn } from 'node:child_process'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { defineAgent } from 'a2a-runtime'
import { afterEach, describe, expect, it } from 'vitest'
import { protoMessage, rawClient, serveWithGrpc, unaryCall } from './_grpc.ts'

/**
 * Request messages a gRPC client sends slowly, or stalls one byte short of, cost the server a bounded amount of
 * memory for a bounded time, as request bodies do over HTTP: the caller is checked on its metadata before anything
 * of its message is read, a message being received counts against `maxBodyBytesInFlight` (past it the call ends
 * UNAVAILABLE, unread), and one not whole within `requestTimeoutMs` ends the call. The attacker is a process of its
 * own (node:http2, one connection), so what is measured here is the server's memory only.
 */

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
/** The heap and the memory outside it (message buffers are Buffers: external), after a full collection. */
const memoryUsed = () => {
  gc()
  const { heapUsed, external } = process.memoryUsage()
  return heapUsed + external
}
const MiB = 1024 * 1024

const echo = (authentication?: { schemes: ['bearer'] }) =>
  defineAgent({
    card: { name: 'Echo', description: 'Echoes', ...(authentication && { authentication }) },
    execute(ctx, task) {
      task.artifact(`Echo: ${ctx.text}`)
      task.complete()
    },
  })

/**
 * Opens `streams` SendMessage calls on one HTTP/2 connection, each declaring a message of `length` bytes and sending
 * all of it but the last byte, then stalls. Prints a JSON line of its progress every 100 ms: `sent` calls whose bytes
 * all left, `ended` calls the server ended (and their grpc-status), `errors`.
 */
const ATTACKER = `
import { connect } from 'node:http2'
const [address, connections, streams, length, token] = process.argv.slice(1)
let sent = 0, ended = 0, errors = 0
const statuses = {}
const began = Date.now()
const endedAt = []
for (let c = 0; c < Number(connections); c++) {
const session = connect('http://' + address, { maxSessionMemory: 1e6 })
session.on('error', () => errors++)
for (let i = 0; i < Number(streams); i++) {
  const headers = { ':method': 'POST', ':path': '/lf.a2a.v1.A2AService/SendMessage', 'content-type': 'application/grpc',
    te: 'trailers', 'a2a-version': '1.0', ...(token && { authorization: 'Bearer ' + token }) }
  const call = session.request(headers)
  let status = 'reset'
  call.on('trailers', (trailers) => { status = trailers['grpc-status'] })
  call.on('response', (headers) => { if (headers['grpc-status']) status = headers['grpc-status'] })
  call.on('error', () => {})
  call.on('data', () => {})
  call.on('close', () => {
    ended++
    if (ended % 50 === 1) endedAt.push(Date.now() - began)
    const key = status === 'reset' ? 'reset ' + call.rstCode : status
    statuses[key] = (statuses[key] ?? 0) + 1
  })
  const header = Buffer.alloc(5)
  header.writeUInt32BE(Number(length), 1)
  call.write(header)
  call.write(Buffer.alloc(Number(length) - 1, 97), (error) => { if (!error) sent++ })
}
}
setInterval(() => console.log(JSON.stringify({ sent, ended, errors, statuses, endedAt })), 100)
`

interface Progress {
  sent: number
  ended: number
  errors: number
  statuses: Record<string, number>
}

const attackers: ChildProcess[] = []
afterEach(() => {
  for (const child of attackers.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})

function attack(
  address: string,
  {
    connections,
    streams,
    length,
    token = '',
  }: { connections: number; streams: number; length: number; token?: string },
): { progress: () => Progress } {
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', ATTACKER, address, String(connections), String(streams), String(length), token],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  attackers.push(child)
  let last: Progress = { sent: 0, ended: 0, errors: 0, statuses: {} }
  let buffered = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    const lines = buffered.split('\n')
    buffered = lines.pop()!
    if (lines.length > 0) last = JSON.parse(lines.at(-1)!)
  })
  return { progress: () => last }
}

/** Every call either sent all it had (and waits on the server) or was ended by it; the peak memory meanwhile. */
async function sentOrEnded(attacker: { progress: () => Progress }, calls: number, before: number): Promise<number> {
  let peak = 0
  const sample = () => {
    peak = Math.max(peak, memoryUsed() - before)
  }
  await expect
    .poll(
      () => {
        sample()
        const { sent, ended } = attacker.progress()
        return sent + ended >= calls
      },
      { timeout: 60_000, interval: 200 },
    )
    .toBe(true)
  // A few samples more: what was sent is being read, or refused.
  for (let i = 0; i < 5; i++) {
    sample()
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return peak
}

const DEADLINE_EXCEEDED = '4'
const UNAVAILABLE = '14'
const UNAUTHENTICATED = '16'

describe('gRPC request messages sent slowly or stalled', () => {
  it('300 calls on one connection stalled one byte short of 1 MiB: at most the budget is read, then cut', async () => {
    const target = await serveWithGrpc(echo(), { requestTimeoutMs: 4000 })
    const normal = rawClient(target.grpcAddress)
    const before = memoryUsed()
    const attacker = attack(target.grpcAddress, { connections: 1, streams: 300, length: MiB })
    const peak = await sentOrEnded(attacker, 300, before)
    console.info(
      `300 calls stalled one byte short of 1 MiB: the server's memory grew at most ${(peak / MiB).toFixed(1)} MiB`,
    )
    // A normal client is answered meanwhile.
    const answer = await unaryCall(normal, 'SendMessage', { message: protoMessage('meanwhile') })
    expect(answer.response?.task.status.state).toBe('TASK_STATE_COMPLETED')
    // Past the budget a call ends UNAVAILABLE, unread; within requestTimeoutMs every call read is ended too.
    await expect.poll(() => attacker.progress().ended, { timeout: 30_000 }).toBe(300)
    const { statuses } = attacker.progress()
    console.info(`the stalled calls ended with grpc-status ${JSON.stringify(statuses)}`)
    // Large messages may take half of maxBodyBytesInFlight (64 MiB): 32 of them, less the normal client's.
    expect(statuses[DEADLINE_EXCEEDED]).toBeGreaterThan(0)
    expect(statuses[DEADLINE_EXCEEDED]).toBeLessThanOrEqual(32)
    expect(statuses[DEADLINE_EXCEEDED]! + statuses[UNAVAILABLE]!).toBe(300)
    // Buffered for, the 300 messages held 300 MiB.
    expect(peak).toBeLessThan(48 * MiB)
  }, 120_000)

  it('an agent that checks credentials reads nothing of a message whose caller it refuses', async () => {
    const target = await serveWithGrpc(echo({ schemes: ['bearer'] }), { auth: { bearerTokens: ['grpc-good-5e1'] } })
    const before = memoryUsed()
    const attacker = attack(target.grpcAddress, { connections: 1, streams: 300, length: MiB, token: 'wrong' })
    const peak = await sentOrEnded(attacker, 300, before)
    await expect.poll(() => attacker.progress().ended, { timeout: 30_000 }).toBe(300)
    const { statuses } = attacker.progress()
    console.info(
      `300 refused callers sending 1 MiB each: the server's memory grew at most ${(peak / MiB).toFixed(1)} MiB; ` +
        `ended ${JSON.stringify(statuses)}`,
    )
    expect(statuses).toEqual({ [UNAUTHENTICATED]: 300 })
    expect(peak).toBeLessThan(16 * MiB)
  }, 120_000)
})
