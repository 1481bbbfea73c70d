import { type ChildProcess, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, posix, relative } from 'node:path'
import { DockerfileParser, type Instruction, JSONInstruction, ModifiableInstruction } from 'dockerfile-ast'

/**
 * A generated Dockerfile read into stages and steps, and a stand-in for `docker build` and `docker run` on a
 * machine without a Docker engine: each stage's WORKDIR becomes a folder, COPY copies (wildcards and
 * `.dockerignore` included), RUN runs with the stage's ENV, and CMD and HEALTHCHECK run as the image would.
 */

export interface Step {
  keyword: string
  /** The arguments as Docker splits them (flags excluded). */
  args: string[]
  flags: Record<string, string>
  /** RUN, CMD and HEALTHCHECK CMD: the shell form's command line, continuation lines joined. */
  shell?: string
  /** CMD in exec form: the argv. */
  exec?: string[]
}

export interface Stage {
  name?: string
  image: string
  steps: Step[]
}

export function readDockerfile(content: string): Stage[] {
  const stages: Stage[] = []
  for (const instruction of DockerfileParser.parse(content).getInstructions()) {
    const step = toStep(instruction)
    if (step.keyword === 'FROM') stages.push({ image: step.args[0]!, name: step.args[2], steps: [] })
    else if (stages.length) stages.at(-1)!.steps.push(step)
    else throw new Error(`${step.keyword} before the first FROM`)
  }
  return stages
}

function toStep(instruction: Instruction): Step {
  const keyword = instruction.getKeyword()
  const flags =
    instruction instanceof ModifiableInstruction
      ? Object.fromEntries(instruction.getFlags().map((flag) => [flag.getName(), flag.getValue() ?? '']))
      : {}
  const args = instruction.getArguments().map((argument) => argument.getValue())
  const step: Step = { keyword, args, flags }
  const exec =
    instruction instanceof JSONInstruction ? instruction.getJSONStrings().map((value) => value.getJSONValue()) : []
  if (exec.length && keyword !== 'HEALTHCHECK') step.exec = exec
  else if (['RUN', 'CMD', 'HEALTHCHECK'].includes(keyword)) {
    let line = (instruction.getRawArgumentsContent() ?? '').replace(/\\\r?\n/g, ' ')
    // HEALTHCHECK [--flags] CMD <command>
    if (keyword === 'HEALTHCHECK') line = line.replace(/^(\s*--\S+)*\s*CMD\s+/, '')
    step.shell = line.trim()
  }
  return step
}

/** `KEY=value` pairs of a stage's ENV steps up to `until`. */
export function stageEnv(stage: Stage, until = stage.steps.length): Record<string, string> {
  const env: Record<string, string> = {}
  for (const step of stage.steps.slice(0, until)) {
    if (step.keyword !== 'ENV') continue
    for (const pair of step.args) {
      const at = pair.indexOf('=')
      env[pair.slice(0, at)] = pair.slice(at + 1).replace(/^"(.*)"$/, '$1')
    }
  }
  return env
}

/** A Docker source pattern (`*`, `?`, `[…]`) as a RegExp over one path. */
export function globToRegExp(pattern: string): RegExp {
  let source = ''
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!
    if (char === '*') source += '[^/]*'
    else if (char === '?') source += '[^/]'
    else if (char === '[') {
      const end = pattern.indexOf(']', i)
      source += pattern.slice(i, end + 1)
      i = end
    } else source += char.replace(/[.+^${}()|\\]/g, '\\$&')
  }
  return new RegExp(`^${source.replace(/\/$/, '')}$`)
}

/** The `.dockerignore` patterns of the project (top-level names and globs, as the generated one has). */
function ignoredBy(context: string): (path: string) => boolean {
  const file = join(context, '.dockerignore')
  const patterns = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith('#'))
        .map(globToRegExp)
    : []
  return (path) => patterns.some((pattern) => pattern.test(path))
}

/** Commands that only set up the image's own file system (owners), with no meaning in a folder here. */
const IMAGE_ONLY = /^chown\s/

export interface Built {
  /** The final stage's folder: its WORKDIR. */
  dir: string
  env: Record<string, string>
  stage: Stage
}

/**
 * Builds `context` into folders under `into` as Docker would, with a clean environment (PATH and HOME only,
 * plus each stage's ENV). `run` runs a RUN step's command line and rejects when it fails.
 */
export async function buildLikeDocker(
  context: string,
  stages: Stage[],
  into: string,
  run: (command: string, cwd: string, env: Record<string, string>) => Promise<void>,
): Promise<Built> {
  const ignored = ignoredBy(context)
  const folders = new Map<string, { dir: string; workdir: string }>()
  let last: Built | undefined
  for (const [index, stage] of stages.entries()) {
    const dir = join(into, `stage-${index}`)
    mkdirSync(dir, { recursive: true })
    let workdir = '/'
    for (const [at, step] of stage.steps.entries()) {
      const env = { PATH: process.env.PATH!, HOME: process.env.HOME!, ...stageEnv(stage, at) }
      if (step.keyword === 'WORKDIR') workdir = step.args[0]!
      if (step.keyword === 'COPY') {
        const sources = step.args.slice(0, -1)
        const destination = join(dir, posix.relative(workdir, posix.resolve(workdir, step.args.at(-1)!)))
        const from = step.flags.from !== undefined ? folders.get(step.flags.from) : undefined
        if (step.flags.from !== undefined && !from) throw new Error(`COPY --from=${step.flags.from}: no such stage`)
        // Several sources, a wildcard or a trailing slash make the destination a folder.
        const intoFolder = sources.length > 1 || step.args.at(-1)!.endsWith('/')
        for (const source of sources) {
          if (from) {
            cpSync(join(from.dir, posix.relative(from.workdir, source)), destination, {
              recursive: true,
              verbatimSymlinks: true,
            })
            continue
          }
          const pattern = globToRegExp(source === '.' ? '*' : source)
          const wildcard = /[*?[]/.test(source)
          const matches = readdirSync(context).filter(
            (name) => (source === '.' || pattern.test(name)) && !ignored(name),
          )
          if (!matches.length && !wildcard && source !== '.')
            throw new Error(`COPY ${source}: not in the build context`)
          for (const name of matches) {
            const path = join(context, name)
            // A folder's contents go into the destination (`.` is the context folder itself); a file goes by name.
            const target =
              source === '.'
                ? join(destination, name)
                : statSync(path).isDirectory()
                  ? destination
                  : intoFolder || wildcard
                    ? join(destination, name)
                    : destination
            cpSync(path, target, {
              recursive: true,
              verbatimSymlinks: true,
              filter: (copied) => !ignored(relative(context, copied)),
            })
          }
        }
      }
      if (step.keyword === 'RUN' && !IMAGE_ONLY.test(step.shell ?? '')) await run(step.shell!, dir, env)
    }
    if (stage.name) folders.set(stage.name, { dir, workdir })
    folders.set(String(index), { dir, workdir })
    last = { dir, env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...stageEnv(stage) }, stage }
  }
  return last!
}

/**
 * The final stage's CMD, started as `docker run` would start it, leading its own process group; the caller ends it by
 * PID.
 */
export function startCmd(built: Built, env: Record<string, string>): ChildProcess {
  const cmd = built.stage.steps.findLast((step) => step.keyword === 'CMD')
  if (!cmd) throw new Error('The Dockerfile has no CMD')
  const [command, ...args] = cmd.exec ?? ['/bin/sh', '-c', cmd.shell!]
  // The image's WORKDIR is where a relative command is found, as in the container.
  const resolved = command!.includes('/') && !command!.startsWith('/') ? join(built.dir, command!) : command!
  return spawn(resolved, args, {
    cwd: built.dir,
    env: { ...built.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
}
