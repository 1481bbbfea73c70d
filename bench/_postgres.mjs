// A private PostgreSQL cluster for one measurement, from Debian's binaries (`/usr/lib/postgresql/<major>/bin`):
// initdb in a fresh folder, listening on 127.0.0.1 and a free port only, pinned like the bench's redis-server (a
// deployment's database runs on a machine of its own, not on the agent's core). Unlike the tests' clusters it
// keeps PostgreSQL's default durability: fsync, synchronous_commit and full_page_writes on, so a commit waits
// for its WAL to reach the disk, as in production. Started as a child of the bench (in its own process group, so
// the bench's clean-up ends it whatever happens; its backends, each a session of its own, exit when they see the
// postmaster gone); as root, the server runs as Debian's `postgres` user (initdb and postgres refuse root).
import { spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, pinPrefix, start } from './_processes.mjs'

const INSTALL_HINT = 'PostgreSQL is not installed (Debian: apt-get install postgresql)'
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** The newest `/usr/lib/postgresql/<major>/bin` that holds a server, if any. */
function binaries() {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const major = readdirSync(root)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a))[0]
  return major && join(root, major, 'bin')
}

export function postgresAvailable() {
  return binaries() !== undefined
}

export function postgresVersion() {
  const bin = binaries()
  if (!bin) return 'not installed'
  return /\d+(\.\d+)?/.exec(spawnSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout ?? '')?.[0]
}

/** As root: the prefix that runs a command as `postgres` (setpriv execs it: the server keeps the child's PID). */
function asPostgres() {
  if (process.getuid?.() !== 0) return { prefix: [], owner: undefined }
  const id = (flag) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim())
  const owner = { uid: id('-u'), gid: id('-g') }
  if (!(owner.uid > 0)) throw new Error('running as root, and there is no `postgres` user to own the cluster')
  return { prefix: ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', '--'], owner }
}

/**
 * Starts one in a new folder under `parent` (default: the system's temporary folder), with `settings` on top of the
 * defaults (none in the bench; a diagnosis may load pg_stat_statements); resolves once it accepts
 * sessions with { url, port, pid, dir, version, query(), walLsn(), walBytesBetween(), walStats(), relationBytes(),
 * cpuSeconds(), stop() }. `stop()` ends it (a fast shutdown) and removes its folder.
 */
export async function startPostgres({ pinning, core, name = 'postgres', parent = tmpdir(), settings = {} }) {
  const bin = binaries()
  if (!bin) throw new Error(INSTALL_HINT)
  const { prefix, owner } = asPostgres()
  const dir = mkdtempSync(join(parent, 'a2a-stores-postgres-'))
  const data = join(dir, 'data')
  const removeDir = () => rmSync(dir, { recursive: true, force: true })
  if (owner) chownSync(dir, owner.uid, owner.gid)
  // initdb's own fsyncs only make the empty cluster durable: skipped; the server runs with fsync on.
  const init = spawnSync(
    prefix[0] ?? join(bin, 'initdb'),
    [
      ...prefix.slice(1),
      ...(prefix.length ? [join(bin, 'initdb')] : []),
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C',
      '--no-sync',
    ],
    { encoding: 'utf8' },
  )
  if (init.status !== 0) {
    removeDir()
    throw new Error(`initdb failed in ${parent}: ${(init.stderr || init.stdout || String(init.error)).slice(-600)}`)
  }
  const port = await freePort()
  // Only where it listens differs from a new cluster's defaults (max_connections 100, shared_buffers 128 MB,
  // fsync, synchronous_commit, full_page_writes, wal_level replica, checkpoints every 5 minutes or 1 GB of WAL).
  const [exe, ...args] = [
    ...pinPrefix(pinning, core),
    ...prefix,
    join(bin, 'postgres'),
    '-D',
    data,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    ...Object.entries(settings).flatMap(([key, value]) => ['-c', `${key}=${value}`]),
  ]
  const handle = start(exe, args, { env: process.env, name })
  const stop = async () => {
    // SIGINT to the postmaster alone: a fast shutdown (its sessions ended, a shutdown checkpoint); the group's
    // SIGKILL after, in case.
    if (handle.alive) process.kill(handle.child.pid, 'SIGINT')
    await Promise.race([handle.exited, pause(30_000)])
    await handle.stop(0)
    removeDir()
  }
  try {
    await waitForSessions(bin, port, handle)
  } catch (error) {
    await stop()
    throw error
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  const query = (text, values) => oneQuery(url, text, values)
  const walLsn = async () => (await query('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0].lsn
  return {
    url,
    port,
    pid: handle.child.pid,
    dir: data,
    handle,
    version: postgresVersion(),
    query,
    /** Where the next WAL record will go (an LSN): reading it writes no WAL. */
    walLsn,
    /** WAL bytes between two LSNs (`pg_wal_lsn_diff`). */
    walBytesBetween: async (from, to) =>
      Number((await query('SELECT pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn) AS bytes', [from, to])).rows[0].bytes),
    /** `pg_waldump --stats` of the WAL between two LSNs: bytes of records and of full-page images, by resource manager. */
    walStats: (from, to) => walStats(bin, data, from, to),
    /** Heap, TOAST and index bytes of every table in `schema` (`pg_total_relation_size`). */
    relationBytes: async (schema) =>
      Number(
        (
          await query(
            `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
            [schema],
          )
        ).rows[0].bytes,
      ),
    /** CPU seconds the cluster's processes (postmaster, backends, background workers) have used so far. */
    cpuSeconds: () => clusterCpu(handle.child.pid),
    stop,
  }
}

async function waitForSessions(bin, port, handle) {
  const deadline = Date.now() + 60_000
  while (!(await accepts(port)) || !isReady(bin, port)) {
    if (!handle.alive) throw new Error(`postgres exited before it accepted sessions:\n${handle.output.slice(-2000)}`)
    if (Date.now() > deadline) throw new Error(`postgres did not accept sessions on ${port}:\n${handle.output}`)
    await pause(50)
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

/** `pg_isready` answers 0 once the server accepts sessions (not while it starts or recovers). */
function isReady(bin, port) {
  const args = ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-t', '2']
  return spawnSync(join(bin, 'pg_isready'), args, { stdio: 'ignore' }).status === 0
}

/** An LSN (`16/B374D848`) as a number of bytes (exact below 2^53: 8 PiB of WAL). */
export const lsnNumber = (lsn) => {
  const [high, low] = lsn.split('/')
  return Number.parseInt(high, 16) * 2 ** 32 + Number.parseInt(low, 16)
}

let pgModule
/** One statement over a connection of its own (node-postgres, installed at the repository's root). */
async function oneQuery(url, text, values) {
  pgModule ??= (await import('pg')).default
  const client = new pgModule.Client({ connectionString: url })
  await client.connect()
  try {
    return await client.query(text, values)
  } finally {
    await client.end()
  }
}

/**
 * Totals of `pg_waldump --stats=record` between two LSNs: { records, recordBytes, fpiBytes, byManager: { Heap:
 * { records, recordBytes, fpiBytes }, … } }. The WAL files are the server's (root reads them; so does the owner).
 */
function walStats(bin, data, from, to) {
  const dump = spawnSync(
    join(bin, 'pg_waldump'),
    ['--path', join(data, 'pg_wal'), '--start', from, '--end', to, '--stats'],
    { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
  )
  if (dump.status !== 0) return { error: (dump.stderr || String(dump.error)).trim().slice(-300) }
  const byManager = {}
  // Lines as "Heap    12 ( 3.45)    3456 ( 5.67)    8192 (10.0)    11648 ( 7.8)": records, record bytes, FPI bytes.
  for (const line of dump.stdout.split('\n')) {
    const match = /^(\S+)\s+(\d+)\s+\(\s*[\d.]+\)\s+(\d+)\s+\(\s*[\d.]+\)\s+(\d+)\s+\(/.exec(line)
    if (!match || match[1] === 'Total' || match[1] === 'Type' || match[2] === '0') continue
    byManager[match[1]] = { records: Number(match[2]), recordBytes: Number(match[3]), fpiBytes: Number(match[4]) }
  }
  const sum = (key) => Object.values(byManager).reduce((total, m) => total + m[key], 0)
  return { records: sum('records'), recordBytes: sum('recordBytes'), fpiBytes: sum('fpiBytes'), byManager }
}

/** Fields after the command name (which may hold spaces): ppid [1], utime [11], stime [12], cutime [13], cstime [14]. */
function statFields(pid) {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
}

/**
 * CPU seconds of the postmaster and its children: each child is a session of its own (setsid), so not its process
 * group but its parent says whose it is; the children that have ended (backends of closed connections) count in the
 * postmaster's cutime and cstime.
 */
function clusterCpu(postmaster) {
  const ticks = (fields, from, to) => fields.slice(from, to + 1).reduce((sum, n) => sum + Number(n), 0)
  let total = 0
  try {
    total = ticks(statFields(postmaster), 11, 14)
  } catch {
    return NaN
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const fields = statFields(entry)
      if (Number(fields[1]) === postmaster) total += ticks(fields, 11, 12)
    } catch {} // gone meanwhile
  }
  return total / 100 // USER_HZ
}
