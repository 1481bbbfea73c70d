// A private redis-server for one measurement: 127.0.0.1, a free port, no persistence (`--save ''`,
// `--appendonly no`), pinned like a load generator (a deployment's Redis runs on a machine of its own, not on
// the agent's core). Started as a child of the bench, so it is ended with the servers whatever happens.
import { spawnSync } from 'node:child_process'
import { connect } from 'node:net'
import { freePort, pinPrefix, start } from './_processes.mjs'

export function redisAvailable() {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0
}

export function redisVersion() {
  return /v=(\S+)/.exec(spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout ?? '')?.[1] ?? 'unknown'
}

/** Starts one; resolves with { url, port, pid, info(), stop() } once it accepts connections. */
export async function startRedis({ pinning, core, name = 'redis' }) {
  if (!redisAvailable()) throw new Error('redis-server is not installed (Debian: apt-get install redis-server)')
  const port = await freePort()
  const [exe, ...args] = [
    ...pinPrefix(pinning, core),
    'redis-server',
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--protected-mode',
    'no',
  ]
  const handle = start(exe, args, { env: process.env, name })
  const deadline = Date.now() + 5000
  while (!(await accepts(port))) {
    if (!handle.alive) throw new Error(`redis-server exited:\n${handle.output}`)
    if (Date.now() > deadline) {
      await handle.stop(0)
      throw new Error(`redis-server did not listen on ${port}:\n${handle.output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    pid: handle.child.pid,
    handle,
    /** `INFO <section>` as numbers and strings by field name. */
    info: (section) => info(port, section),
    /** The bytes one `info(section)` sends. */
    infoCommand,
    stop: () => handle.stop(0),
  }
}

function accepts(port) {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

const infoCommand = (section) => `INFO ${section}\r\n`

/** One INFO over its own connection (an inline command, a bulk reply: a few dozen bytes each way). */
function info(port, section) {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' })
    let reply = ''
    socket.setEncoding('utf8')
    socket.once('error', reject)
    socket.once('connect', () => socket.write(infoCommand(section)))
    socket.on('data', (chunk) => {
      reply += chunk
      const header = /^\$(\d+)\r\n/.exec(reply)
      if (!header || Buffer.byteLength(reply) < header[0].length + Number(header[1])) return
      socket.end()
      const fields = {}
      for (const line of reply.slice(header[0].length).split('\r\n')) {
        const at = line.indexOf(':')
        if (at > 0)
          fields[line.slice(0, at)] = Number.isNaN(Number(line.slice(at + 1)))
            ? line.slice(at + 1)
            : Number(line.slice(at + 1))
      }
      resolve(fields)
    })
  })
}
