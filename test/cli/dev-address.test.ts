import { type ChildProcess, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { a2aBin, freePort, makeAgentProject, runA2a } from '../_support.ts'

/** The environment without anything that would pick the agent or credentials for the CLI. */
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_)/.test(key)),
) as Record<string, string>

const agentSource = (name: string) => `import { defineAgent } from 'a2a-runtime'

export default defineAgent({
  card: { name: ${JSON.stringify(name)}, description: 'Says which project it serves, for address tests', skills: [{ id: 'who', name: 'Who', description: 'Names the project', tags: ['test'], examples: ['who?'] }] },
  execute(ctx, task) {
    task.artifact(${JSON.stringify(`answered by ${name}`)})
    task.complete()
  },
})
`

interface DevServer {
  child: ChildProcess
  project: string
  url: string
  output(): string
  exited: Promise<number | null>
}

const projects: string[] = []
const runs = new Set<ChildProcess>()
const servers: DevServer[] = []
let first: DevServer
let second: DevServer

function project(name: string): string {
  const dir = makeAgentProject('a2a-address-', agentSource(name))
  projects.push(dir)
  return dir
}

/** `a2a dev` in `dir` asked for `port`; resolves with the address it says it serves. */
async function startDev(dir: string, port: number, host = '127.0.0.1'): Promise<DevServer> {
  const child = spawn(process.execPath, [a2aBin, 'dev'], {
    cwd: dir,
    env: { ...cleanEnv, PORT: String(port), HOST: host },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const server = { child, project: dir, url: '', output: () => output, exited }
  servers.push(server)
  const until = Date.now() + 10_000
  const devServerAt = () => /Dev server at (\S+)/.exec(output)?.[1]
  while (!devServerAt()) {
    if (child.exitCode !== null || Date.now() > until) throw new Error(`a2a dev did not listen: ${output}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  server.url = devServerAt()!
  return server
}

beforeAll(async () => {
  first = await startDev(project('Project A'), await freePort())
  // Told the port the first one holds, the second moves to another.
  second = await startDev(project('Project B'), Number(new URL(first.url).port))
}, 30_000)

afterEach(() => {
  for (const child of runs)
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
  runs.clear()
})

afterAll(async () => {
  for (const { child, exited } of servers) {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(child.pid!, 'SIGKILL')
      await exited
    }
  }
  for (const dir of projects) rmSync(dir, { recursive: true, force: true })
}, 60_000)

const a2a = (args: string[], cwd: string, env: Record<string, string> = {}) =>
  runA2a(args, { cwd, env: { ...cleanEnv, ...env }, running: runs })

/** Makes any TCP connect of the command to another machine fail before a packet leaves, and say so on stderr. */
const loopbackOnly = {
  NODE_OPTIONS: `${cleanEnv.NODE_OPTIONS ?? ''} --require "${fileURLToPath(new URL('./_loopback-only.cjs', import.meta.url))}"`,
}
const REFUSED = 'OFF-MACHINE CONNECT REFUSED'

/** A project whose .env PORT leads to the first server, with `.a2a/` made: what a planted file would divert. */
function projectLeadingToFirst(name: string): string {
  const dir = project(name)
  writeFileSync(join(dir, '.env'), `PORT=${new URL(first.url).port}\n`)
  mkdirSync(join(dir, '.a2a'))
  return dir
}

describe("the project's running a2a dev", () => {
  it('is the agent a2a send addresses inside the project, even after it moved to another port, and says so', async () => {
    expect(second.url).not.toBe(first.url)
    const inSecond = await a2a(['send', 'who?'], second.project)
    expect(inSecond.stdout).toContain('answered by Project B')
    expect(inSecond.stderr).toContain(`→ Project B at ${second.url} (this project's a2a dev`)
    expect(inSecond.code).toBe(0)

    const inFirst = await a2a(['send', 'who?'], first.project)
    expect(inFirst.stdout).toContain('answered by Project A')
    expect(inFirst.stderr).toContain(`→ Project A at ${first.url} (this project's a2a dev`)
  })

  it('is the agent a2a card validate --live probes inside the project', async () => {
    const { code, stdout, stderr } = await a2a(['card', 'validate', '--live'], second.project)
    expect(stderr).toContain(`→ ${second.url} (this project's a2a dev)`)
    expect(stdout.trimEnd().split('\n').at(-1)).toBe(`${second.url}.well-known/agent.json: valid`)
    expect(code).toBe(0)
  })

  it('gives way to PORT set in the environment, with a note where the dev server is', async () => {
    const port = new URL(first.url).port
    const { stdout, stderr } = await a2a(['send', 'who?'], second.project, { PORT: port })
    expect(stdout).toContain('answered by Project A')
    expect(stderr).toContain(`(PORT=${port}; this project's a2a dev is at ${second.url}`)
  })

  it('is ignored when its process is gone, or nothing answers at its address', async () => {
    const dir = project('Project C')
    // The .env's PORT leads to the first server; the file, if it were believed, to the second or nowhere.
    writeFileSync(join(dir, '.env'), `PORT=${new URL(first.url).port}\n`)
    mkdirSync(join(dir, '.a2a'))
    const ended = spawn(process.execPath, ['-e', ''])
    await new Promise((resolve) => ended.once('exit', resolve))
    writeFileSync(join(dir, '.a2a/dev.json'), JSON.stringify({ url: second.url, pid: ended.pid }))
    const dead = await a2a(['send', 'who?'], dir)
    expect(dead.stdout).toContain('answered by Project A')
    expect(dead.stderr).toContain('(PORT from .env')

    const nowhere = `http://127.0.0.1:${await freePort()}/`
    writeFileSync(join(dir, '.a2a/dev.json'), JSON.stringify({ url: nowhere, pid: process.pid }))
    const silent = await a2a(['send', 'who?'], dir)
    expect(silent.stdout).toContain('answered by Project A')
    expect(silent.stderr).toContain(`names ${nowhere}, which does not answer`)
  })

  it('is not believed when the file names an address off this machine: a2a send says so and never connects there', async () => {
    const dir = projectLeadingToFirst('Project E')
    // A documentation address (TEST-NET-1) with a live pid: believed, it would get the request and the .env's
    // credentials.
    const planted = `http://192.0.2.2:${new URL(first.url).port}/`
    writeFileSync(join(dir, '.a2a/dev.json'), JSON.stringify({ url: planted, pid: process.pid }))
    const sent = await a2a(['send', 'who?'], dir, loopbackOnly)
    expect(sent.stderr).not.toContain(REFUSED)
    expect(sent.stderr).toContain(
      `.a2a/dev.json ignored: it names ${planted}, which is not an http address on this machine`,
    )
    expect(sent.stderr).toContain('(PORT from .env')
    expect(sent.stdout).toContain('answered by Project A')

    const probed = await a2a(['card', 'validate', '--live'], dir, loopbackOnly)
    expect(probed.stderr).not.toContain(REFUSED)
    expect(probed.stderr).toContain('.a2a/dev.json ignored: it names http://192.0.2.2:')
    expect(probed.stderr).toContain(`→ http://localhost:${new URL(first.url).port}/ (PORT from .env)`)

    // https, or a name that is not localhost, is not what a dev server writes either.
    for (const url of [second.url.replace('http:', 'https:'), `http://agent.example:${new URL(second.url).port}/`]) {
      writeFileSync(join(dir, '.a2a/dev.json'), JSON.stringify({ url, pid: process.pid }))
      const other = await a2a(['send', 'who?'], dir, loopbackOnly)
      expect(other.stderr).not.toContain(REFUSED)
      expect(other.stderr).toContain(`ignored: it names ${url}`)
      expect(other.stdout).toContain('answered by Project A')
    }
  })

  it('is not believed when the file is a symbolic link, and says so', async () => {
    const dir = projectLeadingToFirst('Project F')
    // The link's target is a real, live record: only the link itself makes it suspect.
    writeFileSync(join(dir, 'elsewhere.json'), JSON.stringify({ url: second.url, pid: second.child.pid }))
    symlinkSync(join(dir, 'elsewhere.json'), join(dir, '.a2a/dev.json'))
    const { stdout, stderr } = await a2a(['send', 'who?'], dir)
    expect(stderr).toContain('.a2a/dev.json ignored: it is a symbolic link')
    expect(stdout).toContain('answered by Project A')
  })

  it.runIf(process.getuid?.() === 0)("is not believed when the file is another user's, and says so", async () => {
    const dir = projectLeadingToFirst('Project G')
    writeFileSync(join(dir, '.a2a/dev.json'), JSON.stringify({ url: second.url, pid: second.child.pid }))
    chownSync(join(dir, '.a2a/dev.json'), 54321, 54321)
    const { stdout, stderr } = await a2a(['send', 'who?'], dir)
    expect(stderr).toContain('.a2a/dev.json ignored: it belongs to another user (uid 54321)')
    expect(stdout).toContain('answered by Project A')
  })

  it('is written as a loopback address when a2a dev listens on every interface', async () => {
    const dir = project('Project H')
    const server = await startDev(dir, await freePort(), '0.0.0.0')
    const { url } = JSON.parse(readFileSync(join(dir, '.a2a/dev.json'), 'utf8')) as { url: string }
    expect(url).toBe(`http://127.0.0.1:${new URL(server.url).port}/`)
    const { stdout, stderr } = await a2a(['send', 'who?'], dir, loopbackOnly)
    expect(stderr).toContain(`→ Project H at ${url} (this project's a2a dev`)
    expect(stdout, stderr).toContain('answered by Project H')
  })

  it('stays the first one when a second a2a dev starts in the same project: the second says so, and its exit leaves the file', async () => {
    const dir = project('Project S')
    const firstHere = await startDev(dir, await freePort())
    const secondHere = await startDev(dir, Number(new URL(firstHere.url).port))
    expect(secondHere.url).not.toBe(firstHere.url)
    expect(secondHere.output()).toContain(`Another a2a dev of this project runs at ${firstHere.url}`)
    const file = join(dir, '.a2a/dev.json')
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ url: firstHere.url, pid: firstHere.child.pid })
    process.kill(secondHere.child.pid!, 'SIGINT')
    expect(await secondHere.exited).toBe(0)
    // a2a send in the project still reaches the first, which still runs.
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ url: firstHere.url, pid: firstHere.child.pid })
    const { stderr } = await a2a(['send', 'who?'], dir)
    expect(stderr).toContain(`→ Project S at ${firstHere.url} (this project's a2a dev`)
  })

  it('is written to .a2a/dev.json while it runs and removed when it stops', async () => {
    const dir = project('Project D')
    const server = await startDev(dir, await freePort())
    const file = join(dir, '.a2a/dev.json')
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ url: server.url, pid: server.child.pid })
    process.kill(server.child.pid!, 'SIGINT')
    expect(await server.exited).toBe(0)
    expect(existsSync(file)).toBe(false)
  })
})
