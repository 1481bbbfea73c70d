import { execa } from 'execa'

export type GitOutcome = { done: true; message: string } | { done: false; reason: string }

const git = (cwd: string, args: string[]) => execa('git', args, { cwd, stdin: 'ignore' })

/**
 * `git init` and a first commit of `files`. Skipped inside an existing repository (the project becomes part of it) and
 * when git is missing; a commit git refuses (no user.name/email) leaves the repository initialised.
 */
export async function initGit(dir: string, files: string[]): Promise<GitOutcome> {
  try {
    await git(dir, ['--version'])
  } catch {
    return { done: false, reason: 'git is not installed, so no repository was created' }
  }
  const inside = await git(dir, ['rev-parse', '--is-inside-work-tree']).then(
    (result) => result.stdout.trim() === 'true',
    () => false,
  )
  if (inside)
    return { done: false, reason: 'the directory is already inside a git repository, so no new one was created' }
  await git(dir, ['init', '--quiet'])
  // Only what the generator wrote, less what the project's own .gitignore keeps out (`.env` holds the credential):
  // a user's unrelated files stay out of the first commit, and `git add` never refuses an ignored path.
  const tracked = await notIgnored(dir, files)
  if (tracked.length) await git(dir, ['add', '--', ...tracked])
  try {
    await git(dir, ['commit', '--quiet', '--no-verify', '-m', 'Initial commit from create-a2a-agent'])
  } catch (error) {
    return {
      done: false,
      reason: `initialised a git repository, but the first commit failed (${(error as { shortMessage?: string }).shortMessage ?? 'git commit'}); set user.name and user.email, then commit`,
    }
  }
  return { done: true, message: 'Initialised a git repository with a first commit' }
}

/** The files git does not ignore (`git check-ignore` exits 1 when none is ignored). */
async function notIgnored(dir: string, files: string[]): Promise<string[]> {
  const result = await execa('git', ['check-ignore', '--stdin', '-z'], {
    cwd: dir,
    input: files.join('\0'),
    reject: false,
  })
  if (result.exitCode !== 0 && result.exitCode !== 1) throw new Error(`git check-ignore failed: ${result.stderr}`)
  const ignored = new Set(result.stdout.split('\0').filter(Boolean))
  return files.filter((file) => !ignored.has(file))
}
