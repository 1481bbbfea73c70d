import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { connect } from 'node:net'
import { freePort } from '../_support.ts'

/**
 * A real redis-server of the test's own, on 127.0.0.1 and a free port, with no persistence. `.ci/run`
 * installs the Debian package when it is missing; without it these suites fail and say so.
 */
export interface RedisServer {
  url: string
  port: number
  /** Kills it (SIGKILL): a crash, as far as the clients can tell. */
  kill(): Promise<void>
  /** Starts it again on the same port (empty unless it was started with `durableDir`). */
  restart(): Promise<void>
  stop(): Promise<void>
}

export function redisAvailable(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0
}

/** `durableDir`: keep an append-only file there, fsynced on every write, so a restart keeps what was written. */
export async function startRedis(options: { durableDir?: string } = {}): Promise<RedisServer> {
  if (!redisAvailable())
    throw new Error('redis-server is not installed (Debian: apt-get install redis-server; .ci/run installs it)')
  const port = await freePort()
  let child: ChildProcess | undefined
  const launch = async () => {
    const persistence = options.durableDir
      ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', options.durableDir]
      : ['--appendonly', 'no']
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--protected-mode', 'no'],
      { stdio: 'ignore' },
    )
    const deadline = Date.now() + 5000
    while (!(await accepts(port))) {
      if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${port}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  const end = async (signal: NodeJS.Signals) => {
    const running = child
    child = undefined
    if (!running || running.exitCode !== null || running.signalCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    running.kill(signal)
    await exited
  }
  await launch()
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    kill: () => end('SIGKILL'),
    restart: launch,
    stop: () => end('SIGKILL'),
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
