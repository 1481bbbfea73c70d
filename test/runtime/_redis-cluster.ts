import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from '../_support.ts'
import { redisAvailable } from './_redis.ts'

/**
 * A real Redis Cluster of the test's own: `masters` redis-servers (no replicas) on 127.0.0.1 and free ports, no
 * persistence, all 16384 slots assigned by `redis-cli --cluster create`. It is returned once every node reports
 * `cluster_state:ok` and sees the same nodes owning the same slots. Needs redis-server and redis-cli (Debian:
 * redis-server, redis-tools).
 */
export interface RedisCluster {
  /** In the order they were started; slots were split among them in that order. */
  nodes: Array<{ host: string; port: number }>
  /** The first node, e.g. `redis://127.0.0.1:41234`: a seed, from which a cluster client finds the others. */
  url: string
  /**
   * SIGKILLs node `i` (a crash); it is not started again. Its slots fail at once (the client gives up after its
   * retries, about a second); the others mark it failed after `nodeTimeoutMs` and, having no replica to promote, go
   * `cluster_state:fail` and refuse every key (CLUSTERDOWN), theirs too (cluster-require-full-coverage is left on).
   */
  killNode(i: number): Promise<void>
  /**
   * SIGKILLs every node still running, waits for them to exit and removes their folders; a second call waits for the
   * first.
   */
  stop(): Promise<void>
}

export interface RedisClusterOptions {
  /** At least 3 (redis-cli will not create fewer). Default 3. */
  masters?: number
  /**
   * `cluster-node-timeout`: how long a node may go unanswered before the others count it as failing. Long enough
   * that a loaded 2-core machine pausing a node for a moment does not fail the cluster, short enough that a fault
   * test sees a killed node noticed in seconds. Default 5000.
   */
  nodeTimeoutMs?: number
}

const HOST = '127.0.0.1'
/**
 * Every wait here is bounded by this, not by a short timeout: start-up takes 2–6 s (redis-cli waits in whole seconds
 * for the nodes to join), more on a loaded machine.
 */
const DEADLINE_MS = 60_000

interface Node {
  host: string
  port: number
  /** The cluster bus port, chosen free rather than left at port + 10000 (which is past 65535 for a high port). */
  busPort: number
  dir: string
  child?: ChildProcess
  /** The end of what it printed (its log, and any error about its settings), for a failure to quote. */
  output: string
}

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 5000
  if (!Number.isInteger(masters) || masters < 3)
    throw new Error(`a Redis Cluster needs at least 3 masters, not ${masters}`)
  if (!redisAvailable())
    throw new Error('redis-server is not installed (Debian: apt-get install redis-server; .ci/run installs it)')

  const root = mkdtempSync(join(tmpdir(), 'a2a-redis-cluster-'))
  const nodes: Node[] = []
  const running = new Set<ChildProcess>()
  // Should the test process exit without calling stop (a runner ending on an error), the nodes go with it.
  const onExit = () => {
    for (const child of running) {
      try {
        if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL')
      } catch {} // exited already
    }
    rmSync(root, { recursive: true, force: true })
  }
  process.once('exit', onExit)
  let stopping: Promise<void> | undefined
  const stop = () =>
    (stopping ??= (async () => {
      await Promise.all([...running].map((child) => end(child)))
      rmSync(root, { recursive: true, force: true })
      process.removeListener('exit', onExit)
    })())

  try {
    // Two distinct free ports per node: the client port and the bus port.
    const ports = new Set<number>()
    while (ports.size < masters * 2) ports.add(await freePort())
    const free = [...ports]
    for (let i = 0; i < masters; i++) {
      const dir = join(root, `node-${i}`)
      mkdirSync(dir)
      nodes.push({ host: HOST, port: free[2 * i]!, busPort: free[2 * i + 1]!, dir, output: '' })
    }

    for (const node of nodes) {
      node.child = spawn(
        'redis-server',
        [
          '--port',
          String(node.port),
          '--bind',
          HOST,
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(node.busPort),
          '--cluster-config-file',
          join(node.dir, `nodes-${node.port}.conf`),
          '--cluster-node-timeout',
          String(nodeTimeoutMs),
          '--save',
          '',
          '--appendonly',
          'no',
          '--protected-mode',
          'no',
          '--dir',
          node.dir,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      )
      track(node.child, running)
      const keep = (chunk: Buffer) => (node.output = (node.output + chunk).slice(-4000))
      node.child.stdout!.on('data', keep)
      node.child.stderr!.on('data', keep)
    }
    const deadline = Date.now() + DEADLINE_MS
    await Promise.all(nodes.map((node) => listening(node, deadline)))

    await createCluster(nodes, running, deadline)
    await settled(nodes, deadline)
  } catch (error) {
    await stop()
    throw new Error(`could not start a Redis Cluster of ${masters} masters: ${(error as Error).message}`, {
      cause: error,
    })
  }

  return {
    nodes: nodes.map(({ host, port }) => ({ host, port })),
    url: `redis://${HOST}:${nodes[0]!.port}`,
    killNode: async (i) => {
      const node = nodes[i]
      if (!node) throw new Error(`no node ${i} (the cluster has ${nodes.length})`)
      if (node.child) await end(node.child)
    },
    stop,
  }
}

function track(child: ChildProcess, running: Set<ChildProcess>): void {
  running.add(child)
  child.once('exit', () => running.delete(child))
  // A spawn failure (ENOENT, EAGAIN) comes as an event; it exits without a PID.
  child.once('error', () => running.delete(child))
}

/** SIGKILLs it by its PID if it still runs and waits until it has exited. */
async function end(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  process.kill(child.pid, 'SIGKILL')
  await exited
}

async function listening(node: Node, deadline: number): Promise<void> {
  while (!(await accepts(node.port))) {
    const child = node.child!
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined)
      throw new Error(
        `redis-server on ${node.port} exited (${child.exitCode ?? child.signalCode ?? 'did not start'}) before it listened:\n${logOf(node)}`,
      )
    if (Date.now() > deadline)
      throw new Error(`redis-server did not listen on ${node.port} within ${DEADLINE_MS} ms:\n${logOf(node)}`)
    await sleep(50)
  }
}

/** `redis-cli --cluster create`, killed by PID past the deadline; throws with what it printed unless it exits 0. */
async function createCluster(nodes: Node[], running: Set<ChildProcess>, deadline: number): Promise<void> {
  const args = [
    '--cluster',
    'create',
    ...nodes.map((node) => `${node.host}:${node.port}`),
    '--cluster-replicas',
    '0',
    '--cluster-yes',
  ]
  const cli = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] })
  track(cli, running)
  let output = ''
  cli.stdout!.on('data', (chunk) => (output += chunk))
  cli.stderr!.on('data', (chunk) => (output += chunk))
  const timer = setTimeout(() => void end(cli), Math.max(0, deadline - Date.now()))
  const outcome = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    (resolve) => {
      cli.once('error', (error) => resolve({ code: null, signal: null, error }))
      cli.once('close', (code, signal) => resolve({ code, signal }))
    },
  )
  clearTimeout(timer)
  if (outcome.error)
    throw new Error(`redis-cli did not run (${outcome.error.message}; Debian: apt-get install redis-tools)`)
  if (outcome.code !== 0) {
    const how = outcome.signal ? `was killed (${outcome.signal}) after ${DEADLINE_MS} ms` : `exited ${outcome.code}`
    throw new Error(`redis-cli ${args.join(' ')} ${how}:\n${output.trim()}`)
  }
}

/**
 * Polls each node until it reports `cluster_state:ok` with all 16384 slots assigned and ok, knows every node, and
 * its CLUSTER NODES shows the same owner for every slot as the others', with no node failing or in handshake.
 */
async function settled(nodes: Node[], deadline: number): Promise<void> {
  const clients = nodes.map(
    (node) =>
      new Redis({
        host: node.host,
        port: node.port,
        maxRetriesPerRequest: 0,
        retryStrategy: () => 100,
        connectTimeout: 5000,
        commandTimeout: 5000,
      }),
  )
  for (const client of clients) client.on('error', () => {}) // the poll reads failures as "not yet"
  let last = 'nothing asked yet'
  try {
    for (;;) {
      try {
        const views = await Promise.all(
          clients.map(async (client, i) => ({
            port: nodes[i]!.port,
            info: String(await client.cluster('INFO')),
            nodes: String(await client.cluster('NODES')),
          })),
        )
        const problem = disagreement(views, nodes.length)
        if (!problem) return
        last = problem
      } catch (error) {
        last = (error as Error).message
      }
      if (Date.now() > deadline) throw new Error(`the cluster did not settle within ${DEADLINE_MS} ms: ${last}`)
      await sleep(100)
    }
  } finally {
    for (const client of clients) client.disconnect()
  }
}

/** What is not settled yet, or undefined once it is. */
function disagreement(views: Array<{ port: number; info: string; nodes: string }>, count: number): string | undefined {
  let reference: string | undefined
  for (const view of views) {
    const info = Object.fromEntries(
      view.info
        .split(/\r?\n/)
        .filter((line) => line.includes(':'))
        .map((line) => line.split(':', 2) as [string, string]),
    )
    const wanted = {
      cluster_state: 'ok',
      cluster_slots_assigned: '16384',
      cluster_slots_ok: '16384',
      cluster_known_nodes: String(count),
    }
    for (const [field, value] of Object.entries(wanted))
      if (info[field] !== value) return `node ${view.port} reports ${field}:${info[field]}, not ${value}`
    const lines = view.nodes.trim().split('\n')
    // <id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <link-state> <slot> ...
    const unwell = lines.find((line) => {
      const [, , flags = '', , , , , link] = line.split(' ')
      return /fail|handshake|noaddr/.test(flags) || link !== 'connected'
    })
    if (unwell) return `node ${view.port} sees: ${unwell}`
    const owners = lines
      .map((line) => {
        const fields = line.split(' ')
        return `${fields[0]} ${fields.slice(8).join(' ')}`
      })
      .sort()
      .join('\n')
    if (reference === undefined) reference = owners
    else if (owners !== reference) return `node ${view.port} sees other slot owners than node ${views[0]!.port}`
  }
  return undefined
}

function logOf(node: Node): string {
  return node.output.trim().split('\n').slice(-20).join('\n') || '(it printed nothing)'
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: HOST })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
