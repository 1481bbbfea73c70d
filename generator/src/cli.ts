import type { EventEmitter } from 'node:events'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { basename, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Command, CommanderError, Option } from 'commander'
import { EARLIER_SECRET, isEarlierRun } from './_earlier-run.js'
import { type GitOutcome, initGit } from './_git.js'
import { install, installCommand, LOCKFILES, projectCommand } from './_install.js'
import { askMissing } from './_prompts.js'
import { missingRequirements } from './_requirements.js'
import { planRuntimeDependency, type RuntimeDependency } from './_runtime-dependency.js'
import { busyDirectoryError, busyEntries } from './_target-dir.js'
import { findObstacles, KEPT_IF_PRESENT, writeProject } from './_write.js'
import { UsageError, WriteError } from './errors.js'
import { shellWord } from './escape.js'
import { packageNameFromDir } from './names.js'
import {
  type Answers,
  AUTH_MODES,
  DEFAULT_SKILLS,
  DEPLOY_TARGETS,
  missingAnswers,
  PACKAGE_MANAGERS,
  type ProjectOptions,
  parseSkill,
  RUNTIME_NAMES,
  RUNTIMES,
  resolveDeploy,
  resolveOptions,
  TEMPLATES,
} from './options.js'
import { MODEL_TEMPLATES, renderProject } from './render.js'

/** Where the generator runs and talks: by default the process's directory, terminal, stdout and stderr. */
export interface CliIo {
  /** The directory a relative project directory is taken from. */
  cwd: string
  /** A person at a terminal can answer questions. */
  interactive: boolean
  /** A line of what the command says (the summary, next steps; `--json`'s one line). */
  out(text: string): void
  /** A line of warnings and errors. */
  err(text: string): void
}

const packageRoot = fileURLToPath(new URL('..', import.meta.url))
const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }

function defaultIo(): CliIo {
  return {
    cwd: process.cwd(),
    interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY),
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  }
}

/** The generator's npm page (its README): what `--help` points to. */
const DOCS = 'https://www.npmjs.com/package/create-a2a-agent'

function createProgram(io: CliIo): Command {
  const program = new Command('create-a2a-agent')
    .description('Create an A2A agent project')
    .version(version, '-v, --version', 'print the version')
    .addOption(new Option('-V').hideHelp())
    .argument('[dir]', 'project directory (its name becomes the package name)')
    .option('--package-name <name>', 'the npm package name (default: made from the directory name)')
    .option('--name <name>', "the agent's display name, on its card")
    .option('--description <text>', 'what the agent does')
    // No default value: help would print it as "(default: [])".
    .option(
      '--skill <skill>',
      'a skill as "id:Name:Description" or a JSON object (repeatable; default: the template\'s example skill)',
      (value: string, all: string[] = []) => [...all, value],
    )
    .option('--streaming', 'serve message/stream (default)')
    .option('--no-streaming', 'answer message/send only')
    .option('--push-notifications', 'declare push notifications: clients may give a webhook for task updates')
    .option('--no-push-notifications', 'no push notifications (default)')
    .option('--telemetry', 'export traces, metrics and logs over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (Node)')
    .option('--no-telemetry', 'no OpenTelemetry (default)')
    // Defaults shown in the help; a default is not an answer, so the question is still asked (see `given`).
    .addOption(new Option('--auth <mode>', 'authentication').choices(AUTH_MODES).default('none'))
    .option(
      '--oidc-issuer <url>',
      'with --auth oidc: the issuer whose JWTs the agent accepts (https:, or http: on localhost)',
    )
    .option('--oidc-audience <aud>', 'with --auth oidc: the audience its tokens must name (aud)')
    .addOption(new Option('--template <name>', 'project template').choices(TEMPLATES).default('echo'))
    .addOption(
      new Option('--runtime <name>', 'where the agent runs: Node, Bun, Deno or Cloudflare Workers')
        .choices(RUNTIMES)
        .default('node'),
    )
    .option(
      '--deploy <targets>',
      `where it is deployed: ${DEPLOY_TARGETS.join(', ')} or none, comma-separated or repeated; each platform runs ` +
        'the Docker image (default: docker for Node; Workers deploy with wrangler)',
      (value: string, all: string[] = []) => [...all, value],
    )
    .addOption(
      new Option('--pm <manager>', 'package manager (default: the one running this)').choices(PACKAGE_MANAGERS),
    )
    .option('--no-install', 'skip installing dependencies')
    .option('--no-git', 'skip git init')
    .option('--force', 'write into a non-empty directory (nothing there is deleted or overwritten)')
    .option('--json', 'print a machine-readable summary on stdout')
    .option('-y, --yes', 'use defaults for everything not given; ask nothing')
    .addHelpText('after', `\nDocumentation: ${DOCS}`)
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: (text) => io.out(text.replace(/\n$/, '')) })
  // -V (commander's default) prints the version as -v and --version do: the same three flags as the runtime's `a2a`.
  // (A Command is an EventEmitter; its typings leave emit out.)
  program.on('option:V', () => (program as unknown as EventEmitter).emit('option:version'))
  return program
}

/**
 * Runs the generator as `create-a2a-agent <argv…>` would; resolves to the exit code (0 done, 1 a usage or
 * environment problem, said in one line on `io.err`, 130 cancelled at a prompt). Never calls `process.exit`.
 */
export async function run(argv: string[] = process.argv.slice(2), io: CliIo = defaultIo()): Promise<number> {
  const program = createProgram(io)
  try {
    // 1. Flags.
    program.parse(argv, { from: 'user' })
    const flags = program.opts()
    const given = (key: string) => (program.getOptionValueSource(key) === 'default' ? undefined : flags[key])
    const answers: Answers = {
      dir: program.args[0],
      packageName: flags.packageName,
      name: flags.name,
      description: flags.description,
      skills: (flags.skill as string[] | undefined)?.map(parseSkill),
      streaming: flags.streaming,
      pushNotifications: flags.pushNotifications,
      telemetry: flags.telemetry,
      // An issuer or audience given says which authentication: nothing to ask.
      auth: given('auth') ?? (flags.oidcIssuer !== undefined || flags.oidcAudience !== undefined ? 'oidc' : undefined),
      oidcIssuer: flags.oidcIssuer,
      oidcAudience: flags.oidcAudience,
      template: given('template'),
      runtime: given('runtime'),
      deploy: flags.deploy,
      pm: flags.pm,
      install: flags.install,
      git: flags.git,
      force: flags.force,
      json: flags.json,
      yes: flags.yes,
    }

    // 2. Questions, only for what is missing, only when someone can answer; never wait on a pipe.
    const missing = missingAnswers(answers)
    const asked = !answers.yes && io.interactive
    if (missing.length && !answers.yes && !io.interactive) {
      throw new UsageError(
        `Missing ${missing.join(', ')}: there is no terminal to ask, so pass them or use --yes for defaults.\n\n${program.helpInformation()}`,
      )
    }
    const runtimeDependency = planRuntimeDependency(packageRoot)
    // A busy directory is said as soon as it is named, not after every other question; one holding this very
    // project from an earlier run is continued with that run's answers, asking nothing more.
    const holdsEarlierRun = (candidate: Answers) => holdsProject(candidate, io.cwd, runtimeDependency)
    const complete = asked ? await askMissing(answers, io.cwd, holdsEarlierRun) : answers

    // 3. One validated options object, and what this machine lacks for it, said before anything is written.
    const options = resolveOptions(complete, io.cwd)
    const say = options.json ? io.err : io.out
    for (const problem of missingRequirements(options)) io.err(problem)

    const madeName = packageNameFromDir(basename(options.dir))
    if (complete.packageName === undefined && madeName.fallback) {
      say(
        `Package name: ${options.packageName} (the directory name has no character an npm package name can hold; --package-name sets another).`,
      )
    }

    // 4. The target directory and the files, all checked before the first one is written.
    const busy = busyEntries(options.dir)
    const files = renderProject(join(packageRoot, 'templates'), options, runtimeDependency.specifier)
    // The same project left by an earlier run (stopped during install, say) is continued, not refused.
    const resumed = busy.length > 0 && isEarlierRun(options.dir, files, pendingPaths(runtimeDependency), options.force)
    if (busy.length && !options.force && !resumed) throw busyDirectoryError(options.dir, busy)
    if (runtimeDependency.tarball) {
      try {
        files.push(await runtimeDependency.tarball.pack())
      } catch (error) {
        throw new UsageError(
          `Packing the runtime failed: ${(error as { shortMessage?: string }).shortMessage ?? (error as Error).message}`,
          1,
        )
      }
    }
    // Continuing, the earlier run's credential stays: clients may already use it.
    const keep = resumed ? new Set([...KEPT_IF_PRESENT, EARLIER_SECRET]) : KEPT_IF_PRESENT
    const obstacles = findObstacles(options.dir, files, keep)
    if (obstacles.length) {
      throw new UsageError(
        `The project never writes over or through your files, and these are in the way:\n${obstacles.map((path) => `  ${path}`).join('\n')}\nMove them, or choose another directory.`,
        1,
      )
    }
    let written: string[]
    let kept: string[]
    let unchanged: string[]
    try {
      mkdirSync(options.dir, { recursive: true })
      ;({ written, kept, unchanged } = writeProject(options.dir, files, keep))
    } catch (error) {
      const done = error instanceof WriteError ? error.written : []
      throw new UsageError(
        `Writing the project failed: ${(error as Error).message}\n${done.length ? `Written before it stopped: ${done.join(', ')}. ` : ''}Remove ${options.dir} and run the command again.`,
        1,
      )
    }
    written.sort()
    if (resumed)
      say(
        `Continuing in ${options.dir}: it holds this project from an earlier run (${unchanged.length} file(s) already in place, ${written.length} written).`,
      )
    else
      say(
        `Created ${options.packageName} in ${options.dir} (${options.template} template${options.runtime === 'node' ? '' : `, ${RUNTIME_NAMES[options.runtime]}`})`,
      )
    if (busy.length && !resumed) say(`Left ${busy.length} existing file(s) in place beside it (--force).`)
    for (const path of kept) {
      say(
        path === EARLIER_SECRET && resumed
          ? `Kept the earlier run's ${path} (its credential).`
          : `Kept your ${path}${path === '.gitignore' ? ' (added the entries it lacked)' : ''}.`,
      )
    }

    // 5. Install, in one call.
    let installError: string | undefined
    if (options.install) {
      say(`Installing dependencies with ${options.pm}…`)
      const outcome = await install(options.dir, options.pm, options.json ? 'stderr' : 'inherit')
      installError = outcome.error
      const finish = [
        `  cd ${shellWord(options.dirArgument)} && ${installCommand(options.pm).join(' ')}`,
        `or run the same command again${asked ? ` (${equivalentCommand(options)})` : ''}: it continues in that directory.`,
      ].join('\n')
      if (outcome.interrupted) {
        io.err(`\nInstalling was interrupted. The project is in place; to finish:\n${finish}`)
        return 130
      }
      if (installError) io.err(`Installing failed (${installError}). The project is in place; to finish:\n${finish}`)
    }

    // 6. Git.
    let git: GitOutcome | undefined
    if (options.git) {
      const lockfiles = options.install ? LOCKFILES.filter((file) => existsSync(join(options.dir, file))) : []
      git = await initGit(options.dir, [...written, ...kept, ...unchanged, ...lockfiles])
      say(git.done ? git.message : `Git: ${git.reason}.`)
    }

    // 7. Next steps, the headless command, the summary.
    const commands = nextCommands(options, io.cwd, installError !== undefined || !options.install)
    const model = MODEL_TEMPLATES.has(options.template)
      ? `\nThe model: put your key in .env, as OPENAI_API_KEY=<your key>; OPENAI_MODEL picks the model, OPENAI_BASE_URL another OpenAI-compatible endpoint (a local one needs no key).`
      : ''
    say(
      `\nNext:\n${commands.map((command) => `  ${command}`).join('\n')}\n${model}${oidcStep(options)}\n${cardsAt(options)}`,
    )
    if (asked) say(`\nTo do this again without questions:\n  ${equivalentCommand(options)}`)
    if (options.json) {
      io.out(
        JSON.stringify({
          dir: options.dir,
          packageName: options.packageName,
          template: options.template,
          runtime: options.runtime,
          deploy: options.deploy,
          files: [...written, ...unchanged].sort(),
          installed: options.install && !installError,
          git: git ? (git.done ? 'committed' : git.reason) : 'skipped',
          commands,
        }),
      )
    }
    return installError ? 1 : 0
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return 0
      io.err(`${error.message}\n\n${program.helpInformation()}`)
      return 2
    }
    if (error instanceof UsageError) {
      io.err(error.message)
      return error.exitCode
    }
    throw error
  }
}

/** The packed runtime's path in the project: written after the comparison, so not compared. */
const pendingPaths = (runtimeDependency: RuntimeDependency): string[] =>
  runtimeDependency.tarball ? [runtimeDependency.tarball.path] : []

/** Whether the directory the answers name holds the project they make, left there by an earlier run. */
function holdsProject(answers: Answers, cwd: string, runtimeDependency: RuntimeDependency): boolean {
  let options: ProjectOptions
  try {
    options = resolveOptions(answers, cwd)
  } catch {
    return false
  }
  const files = renderProject(join(packageRoot, 'templates'), options, runtimeDependency.specifier)
  return isEarlierRun(options.dir, files, pendingPaths(runtimeDependency), options.force)
}

/** What an `oidc` project still needs before it serves: the issuer and audience its .env holds as placeholders. */
function oidcStep(options: ProjectOptions): string {
  const missing = [
    options.oidcIssuer === undefined && 'A2A_OIDC_ISSUER (your issuer)',
    options.oidcAudience === undefined && 'A2A_OIDC_AUDIENCE (the audience its tokens name)',
  ].filter(Boolean)
  if (options.auth !== 'oidc' || missing.length === 0) return ''
  return `\nOpenID Connect: set ${missing.join(' and ')} in .env before the agent serves; its tests run their own issuer.`
}

function nextCommands(options: ProjectOptions, cwd: string, needsInstall: boolean): string[] {
  const into = relative(cwd, options.dir) || '.'
  return [
    ...(into === '.' ? [] : [`cd ${shellWord(into)}`]),
    ...(needsInstall ? [installCommand(options.pm).join(' ')] : []),
    projectCommand(options, 'dev'),
  ]
}

/** The one-line command that makes the same project without asking anything. */
export function equivalentCommand(options: ProjectOptions): string {
  // A directory starting with "-" would read as an option: it goes last, after "--".
  const dashed = options.dirArgument.startsWith('-')
  const words = ['npx', 'create-a2a-agent', ...(dashed ? [] : [options.dirArgument])]
  if (options.packageName !== packageNameFromDir(basename(options.dir)).name)
    words.push('--package-name', options.packageName)
  words.push('--name', options.name, '--description', options.description)
  const templateDefault = JSON.stringify(options.skills) === JSON.stringify([DEFAULT_SKILLS[options.template]])
  for (const skill of templateDefault ? [] : options.skills) {
    // The short form trims and fills in; use it only when it reads back the same skill.
    const trimmed = (text: string) => text === text.trim() && text !== ''
    const simple =
      trimmed(skill.name) &&
      trimmed(skill.description) &&
      !skill.name.includes(':') &&
      skill.tags.length === 1 &&
      skill.tags[0] === skill.id &&
      skill.examples.length === 0
    words.push('--skill', simple ? `${skill.id}:${skill.name}:${skill.description}` : JSON.stringify(skill))
  }
  words.push('--template', options.template)
  if (options.runtime !== 'node') words.push('--runtime', options.runtime)
  // Only when it differs from what no --deploy gives (docker for Node, nothing elsewhere).
  if (options.deploy.join(',') !== resolveDeploy(undefined, options.runtime).join(','))
    words.push('--deploy', options.deploy.length ? options.deploy.join(',') : 'none')
  words.push('--auth', options.auth)
  if (options.oidcIssuer !== undefined) words.push('--oidc-issuer', options.oidcIssuer)
  if (options.oidcAudience !== undefined) words.push('--oidc-audience', options.oidcAudience)
  words.push('--pm', options.pm)
  if (!options.streaming) words.push('--no-streaming')
  if (options.pushNotifications) words.push('--push-notifications')
  if (options.telemetry) words.push('--telemetry')
  if (!options.install) words.push('--no-install')
  if (!options.git) words.push('--no-git')
  if (options.force) words.push('--force')
  words.push('--yes')
  if (dashed) words.push('--', options.dirArgument)
  return words.map(shellWord).join(' ')
}

/** Where the cards will be: the one agent's, or the team's two, each at its own path, and their list. */
function cardsAt(options: ProjectOptions): string {
  if (options.template !== 'team') return 'The Agent Card will be at http://localhost:3000/.well-known/agent.json'
  return (
    'The agents will be at http://localhost:3000/planner/ and http://localhost:3000/writer/ ' +
    '(their list: http://localhost:3000/.well-known/agents.json)'
  )
}
