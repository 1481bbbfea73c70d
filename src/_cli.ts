import { mkdirSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Command, CommanderError, Option } from 'commander'
import { shellWord } from './_escape.js'
import { type GitOutcome, initGit } from './_git.js'
import { install, installCommand, scriptCommand } from './_install.js'
import { UsageError } from './_names.js'
import { type Answers, AUTH_MODES, DEFAULT_SKILLS, PACKAGE_MANAGERS, type ProjectOptions, TEMPLATES, missingAnswers, parseSkill, resolveOptions } from './_options.js'
import { askMissing } from './_prompts.js'
import { renderProject } from './_render.js'
import { planRuntimeDependency } from './_runtime-dependency.js'
import { checkTargetDir } from './_target-dir.js'
import { WriteError, findObstacles, writeProject } from './_write.js'

export interface CliIo {
  cwd: string
  /** A person at a terminal can answer questions. */
  interactive: boolean
  out(text: string): void
  err(text: string): void
}

const packageRoot = fileURLToPath(new URL('..', import.meta.url))

function defaultIo(): CliIo {
  return {
    cwd: process.cwd(),
    interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY),
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  }
}

function createProgram(): Command {
  return new Command('create-a2a-agent')
    .description('Create an A2A agent project')
    .argument('[dir]', 'project directory (its name becomes the package name)')
    .option('--name <name>', "the agent's display name, on its card")
    .option('--description <text>', 'what the agent does')
    .option('--skill <skill>', 'a skill as "id:Name:Description" or a JSON object (repeatable)', (value: string, all: string[]) => [...all, value], [] as string[])
    .option('--streaming', 'serve message/stream (default)')
    .option('--no-streaming', 'answer message/send only')
    .option('--push-notifications', 'declare push notifications: clients may give a webhook for task updates')
    .option('--no-push-notifications', 'no push notifications (default)')
    .addOption(new Option('--auth <mode>', 'authentication').choices(AUTH_MODES))
    .addOption(new Option('--template <name>', 'project template').choices(TEMPLATES))
    .addOption(new Option('--pm <manager>', 'package manager (default: the one running this)').choices(PACKAGE_MANAGERS))
    .option('--no-install', 'skip installing dependencies')
    .option('--no-git', 'skip git init')
    .option('--force', 'write into a non-empty directory (nothing there is deleted or overwritten)')
    .option('--json', 'print a machine-readable summary on stdout')
    .option('-y, --yes', 'use defaults for everything not given; ask nothing')
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: (text) => process.stdout.write(text) })
}

/** Runs the generator; resolves to the exit code. */
export async function run(argv: string[] = process.argv.slice(2), io: CliIo = defaultIo()): Promise<number> {
  const program = createProgram()
  try {
    // 1. Flags.
    program.parse(argv, { from: 'user' })
    const flags = program.opts()
    const answers: Answers = {
      dir: program.args[0],
      name: flags.name,
      description: flags.description,
      skills: (flags.skill as string[]).length ? (flags.skill as string[]).map(parseSkill) : undefined,
      streaming: flags.streaming,
      pushNotifications: flags.pushNotifications,
      auth: flags.auth,
      template: flags.template,
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
      throw new UsageError(`Missing ${missing.join(', ')}: there is no terminal to ask, so pass them or use --yes for defaults.\n\n${program.helpInformation()}`)
    }
    // A busy directory is said as soon as it is named, not after every other question.
    const complete = asked ? await askMissing(answers, (dir) => checkTargetDir(resolve(io.cwd, dir), answers.force ?? false)) : answers

    // 3. One validated options object.
    const options = resolveOptions(complete, io.cwd)
    const say = options.json ? io.err : io.out

    // 4. The target directory.
    const { conflicts } = checkTargetDir(options.dir, options.force)

    // 5. The runtime dependency and the files, all checked before the first one is written.
    const runtime = planRuntimeDependency(packageRoot)
    const files = renderProject(join(packageRoot, 'templates'), options, runtime.specifier)
    const obstacles = findObstacles(options.dir, [...files.map((file) => file.path), ...(runtime.tarball ? [runtime.tarball.path] : [])])
    if (obstacles.length) {
      throw new UsageError(`The project never writes over or through your files, and these are in the way:\n${obstacles.map((path) => `  ${path}`).join('\n')}\nMove them, or choose another directory.`, 1)
    }
    let written: string[]
    let kept: string[]
    try {
      mkdirSync(options.dir, { recursive: true })
      await runtime.tarball?.write(options.dir)
      ;({ written, kept } = writeProject(options.dir, files))
    } catch (error) {
      const done = error instanceof WriteError ? error.written : []
      throw new UsageError(
        `Writing the project failed: ${(error as Error).message}\n${done.length ? `Written before it stopped: ${done.join(', ')}. ` : ''}Remove ${options.dir} and run the command again.`,
        1,
      )
    }
    if (runtime.tarball) written.push(runtime.tarball.path)
    written.sort()
    say(`Created ${options.packageName} in ${options.dir} (${options.template} template)`)
    if (conflicts.length) say(`Left ${conflicts.length} existing file(s) in place beside it (--force).`)
    for (const path of kept) say(`Kept your ${path}${path === '.gitignore' ? ' (added the entries it lacked)' : ''}.`)

    // 6. Install, in one call.
    let installError: string | undefined
    if (options.install) {
      say(`Installing dependencies with ${options.pm}…`)
      installError = await install(options.dir, options.pm, options.json ? 'stderr' : 'inherit')
      if (installError) io.err(`Installing failed (${installError}). The project is in place; retry with:\n  cd ${shellWord(options.dirArgument)} && ${installCommand(options.pm).join(' ')}`)
    }

    // 7. Git.
    let git: GitOutcome | undefined
    if (options.git) {
      git = await initGit(options.dir, [...written, ...kept])
      say(git.done ? git.message : `Git: ${git.reason}.`)
    }

    // 8. Next steps, the headless command, the summary.
    const commands = nextCommands(options, io.cwd, installError !== undefined || !options.install)
    say(`\nNext:\n${commands.map((command) => `  ${command}`).join('\n')}\n\nThe Agent Card will be at http://localhost:3000/.well-known/agent.json`)
    if (asked) say(`\nTo do this again without questions:\n  ${equivalentCommand(options)}`)
    if (options.json) {
      io.out(
        JSON.stringify({
          dir: options.dir,
          packageName: options.packageName,
          template: options.template,
          files: written,
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

function nextCommands(options: ProjectOptions, cwd: string, needsInstall: boolean): string[] {
  const into = relative(cwd, options.dir) || '.'
  return [...(into === '.' ? [] : [`cd ${shellWord(into)}`]), ...(needsInstall ? [installCommand(options.pm).join(' ')] : []), scriptCommand(options.pm, 'dev')]
}

/** The one-line command that makes the same project without asking anything. */
export function equivalentCommand(options: ProjectOptions): string {
  // A directory starting with "-" would read as an option: it goes last, after "--".
  const dashed = options.dirArgument.startsWith('-')
  const words = ['npx', 'create-a2a-agent', ...(dashed ? [] : [options.dirArgument]), '--name', options.name, '--description', options.description]
  const templateDefault = JSON.stringify(options.skills) === JSON.stringify([DEFAULT_SKILLS[options.template]])
  for (const skill of templateDefault ? [] : options.skills) {
    // The short form trims and fills in; use it only when it reads back the same skill.
    const trimmed = (text: string) => text === text.trim() && text !== ''
    const simple = trimmed(skill.name) && trimmed(skill.description) && !skill.name.includes(':') && skill.tags.length === 1 && skill.tags[0] === skill.id && skill.examples.length === 0
    words.push('--skill', simple ? `${skill.id}:${skill.name}:${skill.description}` : JSON.stringify(skill))
  }
  words.push('--template', options.template, '--auth', options.auth, '--pm', options.pm)
  if (!options.streaming) words.push('--no-streaming')
  if (options.pushNotifications) words.push('--push-notifications')
  if (!options.install) words.push('--no-install')
  if (!options.git) words.push('--no-git')
  if (options.force) words.push('--force')
  words.push('--yes')
  if (dashed) words.push('--', options.dirArgument)
  return words.map(shellWord).join(' ')
}
