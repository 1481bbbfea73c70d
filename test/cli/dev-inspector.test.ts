import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { send } from '../_served-project.ts'
import { a2aBin, freePort, makeAgentProject, runtimeDir, type StartedA2a, startA2a } from '../_support.ts'

/**
 * The dev inspector as a browser meets it: `a2a dev` as a process, HTTP on a real port. The page's own behaviour
 * is test/inspector's (a real browser); this suite pins the server side: the push receiver, the live channel,
 * their byte budgets, the Host and Origin rules, the page's headers and files, and that `a2a start` has none of it.
 */

/** A loaded 2-core machine can take seconds for what takes milliseconds here: deadlines are tens of seconds. */
const DEADLINE_MS = 30_000
const KiB = 1024
const MiB = 1024 * KiB

/** An agent that completes each task with one artifact; "chunks" streams 20 artifact chunks first. */
const agentSource = ({ broken = false } = {}) => `import { defineAgent } from 'a2a-runtime'

export default defineAgent({
  card: { name: 'Inspector Server Fixture', description: 'Answers each message with one artifact, for the dev inspector server tests', skills: [{ id: 'echo', name: 'Echo', description: 'Echoes the text', tags: ['test'], examples: ['hello'] }] },
  async execute(ctx, task) {
    if (ctx.text === 'chunks') {
      const artifactId = task.artifact('chunk 0 ')
      for (let i = 1; i <= 20; i++) {
        await new Promise((resolve) => setTimeout(resolve, 2))
        task.artifact('chunk ' + i + ' ', { artifactId, append: true, lastChunk: i === 20 })
      }
    } else task.artifact('Echo: ' + ctx.text)
    task.complete()
  }${broken ? ' +' : ''},
})
`

let project: string | undefined
const children = new Set<ChildProcess>()
const sockets = new Set<Socket>()
let started: StartedA2a | undefined

beforeAll(() => {
  const page = join(runtimeDir, 'dist/inspector/index.html')
  if (!existsSync(page)) throw new Error(`${page} is missing: run \`npm run build\` (npm test does) first.`)
})

afterEach(async () => {
  for (const socket of sockets) socket.destroy()
  sockets.clear()
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
  }
  children.clear()
  await started?.dispose()
  started = undefined
  if (project) rmSync(project, { recursive: true, force: true })
  project = undefined
})

/** Polls `probe` until it gives something truthy; past the deadline fails saying what it waited for. */
async function until<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: () => string,
  ms = DEADLINE_MS,
): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what()}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

interface DevServer {
  url: string
  port: number
  pid: number
  output(): string
}

/** `a2a dev` on a new project holding `source`, once it says where it serves. */
async function startDev(
  source = agentSource(),
  { args = [], env = {} }: { args?: string[]; env?: Record<string, string> } = {},
): Promise<DevServer> {
  project = makeAgentProject('a2a-dev-inspector-', source)
  const port = await freePort()
  const child = spawn(process.execPath, [a2aBin, 'dev', ...args], {
    cwd: project,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
  })
  children.add(child)
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  await until(
    () => {
      if (child.exitCode !== null) throw new Error(`a2a dev exited with ${child.exitCode}: ${output}`)
      return output.includes('Dev server at')
    },
    () => `"Dev server at" from a2a dev: ${output}`,
  )
  return { url: `http://127.0.0.1:${port}/`, port, pid: child.pid!, output: () => output }
}

interface Reply {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
  text: string
  json(): any
}

/**
 * One request on a connection of its own (no keep-alive pool to trip over a connection the server closed). A body
 * given as an array goes out chunked, without content-length. A refusal the server sends before reading the whole
 * body counts as the answer, whatever the write then runs into.
 */
function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer | Buffer[] } = {},
): Promise<Reply> {
  const { method = 'GET', headers = {}, body } = options
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', reject)
      res.on('end', () => {
        const all = Buffer.concat(chunks)
        const text = all.toString('utf8')
        resolve({ status: res.statusCode!, headers: res.headers, body: all, text, json: () => JSON.parse(text) })
      })
    })
    req.on('error', reject)
    if (Array.isArray(body)) {
      req.setHeader('transfer-encoding', 'chunked')
      for (const part of body) req.write(part)
      req.end()
    } else req.end(body)
  })
}

const postDelivery = (
  url: string,
  body: string | Buffer | Buffer[],
  headers: Record<string, string> = { 'content-type': 'application/json' },
  path = '__a2a/push',
) => request(`${url}${path}`, { method: 'POST', headers, body })

const deliveries = async (url: string) => (await request(`${url}__a2a/api/push`)).json().deliveries as any[]

interface Frame {
  event: string
  data: any
}

/** Splits Server-Sent Events text into frames; returns the frames and the unfinished rest. */
function parseFrames(text: string): { frames: Frame[]; rest: string } {
  const blocks = text.split('\n\n')
  const rest = blocks.pop()!
  const frames: Frame[] = []
  for (const block of blocks) {
    let event = 'message'
    let data = ''
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7)
      else if (line.startsWith('data: ')) data += line.slice(6)
    }
    if (data) frames.push({ event, data: JSON.parse(data) })
  }
  return { frames, rest }
}

/** The live channel `/__a2a/events` as a page reads it: every frame, kept in order. */
async function openChannel(url: string) {
  const frames: Frame[] = []
  let text = ''
  let ended = false
  const response = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
    const req = httpRequest(`${url}__a2a/events`, { agent: false }, resolve)
    req.on('error', reject)
    req.on('socket', (socket) => sockets.add(socket))
    req.end()
  })
  expect(response.statusCode).toBe(200)
  expect(response.headers['content-type']).toBe('text/event-stream')
  response.setEncoding('utf8')
  response.on('data', (chunk: string) => {
    const parsed = parseFrames(text + chunk)
    text = parsed.rest
    frames.push(...parsed.frames)
  })
  response.on('close', () => (ended = true))
  let read = 0
  return {
    frames,
    /** The next frame (after those returned before) of `event` that `matches`. */
    next(event: string, matches: (data: any) => boolean = () => true): Promise<Frame> {
      return until(
        () => {
          for (; read < frames.length; read++) {
            const frame = frames[read]!
            if (frame.event === event && matches(frame.data)) {
              read++
              return frame
            }
          }
          if (ended)
            throw new Error(
              `the live channel ended before the ${event} frame; it sent ${JSON.stringify(frames.map((f) => f.event))}`,
            )
          return undefined
        },
        () => `an "${event}" frame on the live channel; it sent ${JSON.stringify(frames.map((f) => f.event))}`,
      )
    },
  }
}

/** The process's resident memory in bytes, where /proc tells it (Linux). */
function rssOf(pid: number): number | undefined {
  try {
    const kiB = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    return kiB === undefined ? undefined : Number(kiB) * KiB
  } catch {
    return undefined
  }
}

const mb = (bytes: number) => `${(bytes / MiB).toFixed(2)} MiB`

describe('a2a dev inspector: the push receiver', () => {
  it('keeps each delivery with its shown headers, its path and its body parsed as JSON or kept as text', {
    timeout: 90_000,
  }, async () => {
    const { url } = await startDev()
    const sent = await postDelivery(url, JSON.stringify({ id: 'task-1', status: { state: 'completed' } }), {
      'content-type': 'application/json',
      'x-a2a-notification-token': 'token-1',
      'x-not-shown': 'hidden',
    })
    expect(sent.status).toBe(200)
    const first = sent.json().received
    expect(first).toEqual(expect.any(Number))

    const text = await postDelivery(url, 'not JSON {', { 'content-type': 'text/plain' }, '__a2a/push/anything')
    expect(text.status).toBe(200)
    expect(text.json().received).toBeGreaterThan(first)

    const kept = await deliveries(url)
    expect(kept).toHaveLength(2)
    expect(kept[0]).toMatchObject({
      id: first,
      path: '/__a2a/push',
      headers: { 'content-type': 'application/json', 'x-a2a-notification-token': 'token-1' },
      body: { id: 'task-1', status: { state: 'completed' } },
      bytes: Buffer.byteLength(JSON.stringify({ id: 'task-1', status: { state: 'completed' } })),
    })
    expect(kept[0].headers).not.toHaveProperty('x-not-shown')
    expect(kept[0].headers).not.toHaveProperty('host')
    expect(Number.isNaN(Date.parse(kept[0].at))).toBe(false)
    expect(kept[1]).toMatchObject({
      path: '/__a2a/push/anything',
      headers: { 'content-type': 'text/plain' },
      body: 'not JSON {',
      bytes: 10,
    })
  })

  it('takes only POST: GET on the push path is 405', { timeout: 90_000 }, async () => {
    const { url } = await startDev()
    for (const path of ['__a2a/push', '__a2a/push/anything']) {
      const refused = await request(`${url}${path}`)
      expect(refused.status, path).toBe(405)
      expect(refused.headers.allow).toBe('POST')
      expect(refused.json().error).toMatch(/POST/)
    }
    expect(await deliveries(url)).toEqual([])
  })

  it('refuses a delivery over 256 KiB with 413 and keeps nothing of it, with content-length and chunked', {
    timeout: 90_000,
  }, async () => {
    const { url } = await startDev()
    const tooLarge = Buffer.from(JSON.stringify({ pad: 'x'.repeat(256 * KiB) }))
    const declared = await postDelivery(url, tooLarge)
    expect(declared.status).toBe(413)
    expect(declared.json().error).toMatch(/256 KiB/)
    // Chunked: no length to refuse up front, so it is cut once 256 KiB have been read.
    const parts = Array.from({ length: 10 }, (_, i) => tooLarge.subarray(i * 32 * KiB, (i + 1) * 32 * KiB))
    const chunked = await postDelivery(url, parts)
    expect(chunked.status).toBe(413)
    expect(await deliveries(url)).toEqual([])

    // Exactly the limit is still a delivery.
    const atLimit = await postDelivery(url, Buffer.alloc(256 * KiB, 'y'), { 'content-type': 'text/plain' })
    expect(atLimit.status).toBe(200)
    expect((await deliveries(url)).map((delivery) => delivery.bytes)).toEqual([256 * KiB])
  })

  it('forgets every delivery on DELETE /__a2a/api/push', { timeout: 90_000 }, async () => {
    const { url } = await startDev()
    for (const n of [1, 2, 3]) expect((await postDelivery(url, JSON.stringify({ n }))).status).toBe(200)
    expect(await deliveries(url)).toHaveLength(3)
    const cleared = await request(`${url}__a2a/api/push`, { method: 'DELETE' })
    expect(cleared.status).toBe(200)
    expect(cleared.json()).toEqual({ deliveries: [] })
    expect(await deliveries(url)).toEqual([])
    // Numbering goes on: a page never confuses a new delivery with one it showed before the clear.
    expect((await postDelivery(url, '{}')).json().received).toBe(4)
  })
})

describe('a2a dev inspector: bounded in bytes', () => {
  it('keeps at most 2 MiB of deliveries, the newest, dropping the oldest', { timeout: 120_000 }, async () => {
    const { url } = await startDev()
    const pad = 'p'.repeat(200_000)
    let posted = 0
    for (let seq = 0; seq < 40; seq++) {
      const body = JSON.stringify({ seq, pad })
      expect((await postDelivery(url, body)).status).toBe(200)
      posted += body.length
    }
    const listing = await request(`${url}__a2a/api/push`)
    const kept = listing.json().deliveries as Array<{ body: { seq: number } }>
    const seqs = kept.map((delivery) => delivery.body.seq)
    expect(
      listing.body.length,
      `the kept list's JSON reached ${listing.body.length} bytes (${mb(listing.body.length)}) after ${posted} bytes were posted`,
    ).toBeLessThanOrEqual(2 * MiB + 4 * KiB)
    // Not trimmed to nothing either: the budget is used.
    expect(listing.body.length, `the kept list's JSON is ${listing.body.length} bytes`).toBeGreaterThan(
      2 * MiB - 250_000,
    )
    expect(seqs.at(-1)).toBe(39)
    expect(seqs[0]).toBeGreaterThan(0)
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => 40 - seqs.length + i))
  })

  it('cuts a page that does not read the live channel instead of buffering for it', { timeout: 180_000 }, async () => {
    const { url, port, pid } = await startDev()
    const socket = connect(port, '127.0.0.1')
    sockets.add(socket)
    let received = 0
    let head = ''
    let closed = false
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length
      if (head.length < 64 * KiB) head += chunk.toString('latin1')
    })
    socket.on('error', () => {}) // a reset is a cut too
    socket.on('close', () => (closed = true))
    socket.write(`GET /__a2a/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`)
    await until(
      () => /\r\n\r\n[\s\S]*event: hello\ndata: .*\n\n/.test(head),
      () => `the headers and hello frame: ${head}`,
    )
    expect(head).toMatch(/^HTTP\/1\.1 200 /)
    socket.pause()
    const receivedBeforePause = received

    // Each delivery is broadcast as an `event: push` frame of about its size.
    const rssBefore = rssOf(pid)
    let rssPeak = rssBefore ?? 0
    const body = JSON.stringify({ pad: 'q'.repeat(200_000) })
    let posted = 0
    for (let i = 0; posted < 30_000_000; i++) {
      expect((await postDelivery(url, body)).status).toBe(200)
      posted += body.length
      if (i % 10 === 0) rssPeak = Math.max(rssPeak, rssOf(pid) ?? 0)
    }
    const rssAfter = rssOf(pid)
    if (rssAfter !== undefined) rssPeak = Math.max(rssPeak, rssAfter)

    socket.resume()
    await until(
      () => closed,
      () => `the server to cut the page that did not read (received ${received} of ${posted} bytes posted)`,
      60_000,
    )
    const report = `the page received ${received} bytes (${mb(received)}; ${receivedBeforePause} before it stopped reading) of ${posted} bytes (${mb(posted)}) posted and broadcast`
    // What reached the page is what the kernel's socket buffers took plus the server's 1 MiB backlog, not the rest
    // (the buffers' size is the machine's: only the share is asserted).
    expect(received * 3, report).toBeLessThan(posted)
    if (rssBefore !== undefined) {
      const growth = rssPeak - rssBefore
      expect(
        growth,
        `the dev server's RSS went from ${mb(rssBefore)} to a peak of ${mb(rssPeak)} (+${mb(growth)}) while ${mb(posted)} was posted`,
      ).toBeLessThan(150 * MiB)
    }

    // The server goes on: a new page gets its hello (the kept deliveries it reads apart, not in its first frame).
    const channel = await openChannel(url)
    const hello = await channel.next('hello')
    expect(hello.data.pushUrl).toBe(`${url}__a2a/push`)
    expect(hello.data.deliveries).toBeUndefined()
    expect((await deliveries(url)).length).toBeGreaterThan(0)
  })
})

describe('a2a dev inspector: Host and Origin', () => {
  it('refuses a foreign Origin and a foreign Host with 403, and lets in the page of its own origin', {
    timeout: 90_000,
  }, async () => {
    const { url, port } = await startDev()
    const cases = [
      { method: 'GET', path: '__a2a/' },
      { method: 'GET', path: '__a2a/events' },
      { method: 'POST', path: '__a2a/push', body: '{"from":"elsewhere"}' },
      { method: 'DELETE', path: '__a2a/api/push' },
    ]
    for (const { method, path, body } of cases) {
      const foreignOrigin = await request(`${url}${path}`, {
        method,
        headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
        body,
      })
      expect(foreignOrigin.status, `${method} /${path} from https://evil.example`).toBe(403)
      expect(foreignOrigin.json().error).toMatch(/Origin "https:\/\/evil\.example" is not allowed/)
      // DNS rebinding: the page is on this port, but its browser names another site.
      const foreignHost = await request(`${url}${path}`, {
        method,
        headers: { host: 'evil.example', 'content-type': 'application/json' },
        body,
      })
      expect(foreignHost.status, `${method} /${path} with Host: evil.example`).toBe(403)
      expect(foreignHost.json().error).toMatch(/Host "evil\.example" is not allowed/)
    }
    expect(await deliveries(url)).toEqual([])

    const own = { origin: `http://127.0.0.1:${port}`, 'content-type': 'application/json' }
    expect((await request(`${url}__a2a/`, { headers: own })).status).toBe(200)
    expect(
      (await request(`${url}__a2a/push`, { method: 'POST', headers: own, body: '{"from":"the page"}' })).status,
    ).toBe(200)
    expect((await deliveries(url)).map((delivery) => delivery.body)).toEqual([{ from: 'the page' }])
    expect((await request(`${url}__a2a/api/push`, { method: 'DELETE', headers: own })).json()).toEqual({
      deliveries: [],
    })
    const events = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const req = httpRequest(`${url}__a2a/events`, { headers: own, agent: false }, resolve)
      req.on('error', reject)
      req.on('socket', (socket) => sockets.add(socket))
      req.end()
    })
    expect(events.statusCode).toBe(200)
    expect(events.headers['content-type']).toBe('text/event-stream')
    events.destroy()
  })
})

describe('a2a dev inspector: the page', () => {
  it('serves the page with its security headers and its hashed files cached for good, small when gzipped', {
    timeout: 90_000,
  }, async () => {
    const { url } = await startDev()
    const redirect = await request(`${url}__a2a`)
    expect(redirect.status).toBe(308)
    expect(redirect.headers.location).toBe('/__a2a/')

    const page = await request(`${url}__a2a/`)
    expect(page.status).toBe(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.headers['content-security-policy']).toMatch(/default-src 'self'/)
    expect(page.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/)
    expect(page.headers['content-security-policy']).not.toMatch(/script-src[^;]*'unsafe-inline'/)
    expect(page.headers['x-content-type-options']).toBe('nosniff')
    expect(page.headers['cache-control']).toBe('no-cache')

    const referenced = [...page.text.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"/g)]
      .map((match) => match[1]!)
      .filter((ref) => !ref.startsWith('data:'))
    expect(referenced.some((ref) => ref.endsWith('.js'))).toBe(true)
    expect(referenced.some((ref) => ref.endsWith('.css'))).toBe(true)
    let gzipped = 0
    let raw = 0
    for (const ref of referenced) {
      const asset = await request(new URL(ref, `${url}__a2a/`).href)
      expect(asset.status, ref).toBe(200)
      expect(asset.headers['cache-control'], ref).toBe('public, max-age=31536000, immutable')
      expect(asset.headers['x-content-type-options'], ref).toBe('nosniff')
      expect(asset.headers['content-type'], ref).toBe(
        ref.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
      )
      expect(asset.headers['content-security-policy'], ref).toBeUndefined()
      raw += asset.body.length
      gzipped += gzipSync(asset.body).length
    }
    expect(
      gzipped,
      `the page's ${referenced.length} files are ${raw} bytes, ${gzipped} bytes (${(gzipped / KiB).toFixed(1)} KiB) gzipped`,
    ).toBeLessThan(150 * KiB)

    for (const missing of ['__a2a/nothing-here.js', '__a2a/assets/index-missing.js']) {
      const notFound = await request(`${url}${missing}`)
      expect(notFound.status, missing).toBe(404)
      expect(notFound.headers['content-type']).toBe('application/json')
      expect(notFound.json().error).toMatch(/is not part of the inspector/)
    }
  })
})

describe.runIf(process.platform === 'linux')('a2a dev --open', () => {
  it("opens the inspector's address with the desktop's opener (xdg-open)", { timeout: 90_000 }, async () => {
    // A stand-in xdg-open first on the PATH, writing down what it was asked to open.
    const bin = mkdtempSync(join(tmpdir(), 'a2a-open-'))
    const opened = join(bin, 'opened.txt')
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`, { mode: 0o755 })
    try {
      const dev = await startDev(agentSource(), { args: ['--open'], env: { PATH: `${bin}:${process.env.PATH}` } })
      await until(
        () => existsSync(opened) && readFileSync(opened, 'utf8') !== '',
        () => `xdg-open to be run: ${dev.output()}`,
      )
      expect(readFileSync(opened, 'utf8')).toBe(`${dev.url}__a2a/`)
      expect(dev.output()).toContain(`Inspector at ${dev.url}__a2a/`)
    } finally {
      rmSync(bin, { recursive: true, force: true })
    }
  })
})

describe('a2a dev inspector: the live channel', () => {
  it('answers while the agent does not load, says why in hello, and reports the fixing save as a load', {
    timeout: 120_000,
  }, async () => {
    const { url } = await startDev(agentSource({ broken: true }))
    expect((await request(`${url}.well-known/agent.json`)).status).toBe(503)
    const page = await request(`${url}__a2a/`)
    expect(page.status).toBe(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')

    const channel = await openChannel(url)
    const hello = await channel.next('hello')
    expect(hello.data.pushUrl).toBe(`${url}__a2a/push`)
    expect(hello.data.load.failure).toMatchObject({
      file: 'src/agent.ts',
      line: expect.any(Number),
      column: expect.any(Number),
      cause: expect.stringMatching(/Error/),
    })
    expect(hello.data.load.failure.line).toBeGreaterThan(0)
    expect(hello.data.load.failure.text).toMatch(/^src\/agent\.ts:\d+:\d+ /)

    // Saved as editors do: a new file renamed over the old one.
    const temporary = join(project!, 'src/.agent.ts.tmp')
    writeFileSync(temporary, agentSource())
    renameSync(temporary, join(project!, 'src/agent.ts'))
    const load = await channel.next('load', (data) => data.failure === undefined)
    expect(load.data.files).toContain('src/agent.ts')
    expect(load.data.ms).toEqual(expect.any(Number))
    expect((await request(`${url}.well-known/agent.json`)).status).toBe(200)
  })

  it("reports each task's states as task frames, ending with completed, and no frame for an artifact chunk", {
    timeout: 90_000,
  }, async () => {
    const { url } = await startDev()
    const channel = await openChannel(url)
    await channel.next('hello')

    const statesOf = async (text: string) => {
      const reply = await send(url, text)
      expect(reply.status).toBe(200)
      const task = reply.body.result
      expect(task.status.state).toBe('completed')
      await channel.next('task', (data) => data.id === task.id && data.state === 'completed')
      const frames = channel.frames.filter((frame) => frame.event === 'task' && frame.data.id === task.id)
      for (const frame of frames)
        expect(frame.data).toMatchObject({
          id: task.id,
          contextId: task.contextId,
          title: text,
          at: expect.any(String),
        })
      return { task, states: frames.map((frame) => frame.data.state as string) }
    }

    const plain = await statesOf('hello')
    expect(plain.states[0]).toBe('submitted')
    expect(plain.states.at(-1)).toBe('completed')

    // 21 chunks of one artifact: the same task frames as a task with a single artifact.
    const chunked = await statesOf('chunks')
    expect(chunked.task.artifacts[0].parts.map((part: { text: string }) => part.text).join('')).toMatch(
      /^chunk 0 chunk 1 .*chunk 20 $/,
    )
    expect(chunked.states).toEqual(plain.states)

    // The task list the page starts from: the dev store's tasks, newest first, as the same lines.
    const listed = (await request(`${url}__a2a/api/tasks`)).json()
    expect(listed.total).toBe(2)
    expect(listed.tasks.map((line: { title: string; state: string }) => [line.title, line.state])).toEqual([
      ['chunks', 'completed'],
      ['hello', 'completed'],
    ])
  })

  it('lists the tasks while the agent does not load, from the dev store', { timeout: 90_000 }, async () => {
    const { url } = await startDev()
    const reply = await send(url, 'kept')
    expect(reply.body.result.status.state).toBe('completed')
    const temporary = join(project!, 'src/.agent.ts.tmp')
    writeFileSync(temporary, agentSource({ broken: true }))
    renameSync(temporary, join(project!, 'src/agent.ts'))
    await until(
      async () => (await request(`${url}.well-known/agent.json`)).status === 503,
      () => 'the broken save to take effect',
    )
    const listed = (await request(`${url}__a2a/api/tasks`)).json()
    expect(listed.tasks.map((line: { title: string }) => line.title)).toEqual(['kept'])
  })
})

describe('a2a start', () => {
  it('never serves the inspector', { timeout: 90_000 }, async () => {
    started = await startA2a('a2a-start-inspector-', agentSource(), {})
    for (const path of ['__a2a/', '__a2a', '__a2a/events', '__a2a/api/push']) {
      const answer = await request(`${started.url}${path}`)
      expect(answer.status, path).toBe(404)
      expect(answer.headers['content-type'] ?? '', path).not.toMatch(/html|event-stream/)
      expect(answer.text, path).not.toMatch(/<html/i)
    }
    const push = await request(`${started.url}__a2a/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(push.status).not.toBe(200)
    expect(push.text).not.toMatch(/received/)
  })
})
