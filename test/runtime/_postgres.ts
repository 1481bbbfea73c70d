import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../_support.ts'

/**
 * A real PostgreSQL server of the test's own: Debian's `postgresql` binaries, a new cluster in a temporary folder,
 * listening on 127.0.0.1 and a free port only (no Unix socket), trusting local connections. `.ci/run` installs the
 * package when it is missing; without it these suites fail and say so.
 */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: the cluster's superuser on its default database. */
  url: string
  port: number
  /** Kills the postmaster (SIGKILL): a crash, as the clients see it; the data folder stays for `restart`. */
  kill(): Promise<void>
  /** Starts it again on the same port and data (it recovers from its WAL what was committed). */
  restart(): Promise<void>
  /** Stops it and removes its folder. */
  stop(): Promise<void>
}

const INSTALL_HINT = 'PostgreSQL is not installed (Debian: apt-get install postgresql; .ci/run installs it)'

/** The folder of the newest PostgreSQL binaries Debian installed (`/usr/lib/postgresql/<major>/bin`), if any. */
export function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const majors = readdirSync(root)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a))
  return majors[0] === undefined ? undefined : join(root, majors[0], 'bin')
}

export function postgresAvailable(): boolean {
  return postgresBinaries() !== undefined
}

// initdb and postgres refuse to run as root: as root (CI), the cluster belongs to Debian's `postgres` user.
const asRoot = process.getuid?.() === 0

function osUser(): { uid: number; gid: number } | undefined {
  if (!asRoot) return undefined
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim())
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim())
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid <= 0)
    throw new Error(
      'running as root, and there is no `postgres` user to own the test cluster (the Debian package makes one)',
    )
  return { uid, gid }
}

/**
 * Starts a cluster of its own. Durable as far as a crash of the server goes (`synchronous_commit` on: a commit is
 * in the WAL the OS holds before it is acknowledged), with `fsync` off: nothing here survives a crash of the machine,
 * and every test runs faster for it.
 */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBinaries()
  if (!bin) throw new Error(INSTALL_HINT)
  const owner = osUser()
  const dir = mkdtempSync(join(tmpdir(), 'a2a-postgres-'))
  const data = join(dir, 'data')
  if (owner) chownSync(dir, owner.uid, owner.gid)
  const initdb = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
    { encoding: 'utf8', ...(owner && { uid: owner.uid, gid: owner.gid }) },
  )
  if (initdb.status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`initdb failed: ${(initdb.stderr || initdb.stdout).slice(-600)}`)
  }
  const port = await freePort()
  let child: ChildProcess | undefined
  let output = ''
  const launch = async () => {
    output = ''
    child = spawn(
      join(bin, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'fsync=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=200',
        '-c',
        'shared_buffers=64MB',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], ...(owner && { uid: owner.uid, gid: owner.gid }) },
    )
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000)
    }
    child.stdout?.on('data', keep)
    child.stderr?.on('data', keep)
    const deadline = Date.now() + 30_000
    while (!(await accepts(port))) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`postgres exited before it listened on ${port}: ${output.slice(-600)}`)
      if (Date.now() > deadline) throw new Error(`postgres did not listen on ${port}: ${output.slice(-600)}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    // It listens before it accepts sessions (recovery after a crash): wait for a session to open.
    while (!(await acceptsSessions(bin, port))) {
      if (Date.now() > deadline) throw new Error(`postgres on ${port} did not accept sessions: ${output.slice(-600)}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
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
  try {
    await launch()
  } catch (error) {
    await end('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    // The postmaster alone, as a crash: its backends notice and exit; the next start recovers.
    kill: () => end('SIGKILL'),
    restart: launch,
    stop: async () => {
      // SIGINT: a fast shutdown (sessions ended, no waiting for clients); the folder goes after.
      await end('SIGINT')
      rmSync(dir, { recursive: true, force: true })
    },
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

/** `pg_isready` says 0 once the server accepts sessions (1 while it starts or recovers). */
function acceptsSessions(bin: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = spawn(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-t', '2'], {
      stdio: 'ignore',
    })
    probe.once('exit', (code) => resolve(code === 0))
    probe.once('error', () => resolve(false))
  })
}
