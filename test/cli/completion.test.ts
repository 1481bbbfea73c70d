import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { registerCompletion } from '../../runtime/src/cli/completion/_command.ts'
import { completionScript } from '../../runtime/src/cli/completion/_scripts.ts'
import { completionTree } from '../../runtime/src/cli/completion/_tree.ts'

/** `a2a completion <shell>`: scripts generated from the command tree, asked by the shells themselves. */

const { Command } = createRequire(import.meta.url)('commander') as typeof import('commander')

function program() {
  const a2a = new Command('a2a').option('-a, --agent-card <ref>', 'the agent')
  a2a.addOption(a2a.createOption('-o, --output <format>', 'format').choices(['text', 'json']))
  a2a.command('send').option('--text <text>').option('--stream').option('--context-id <id>')
  const task = a2a.command('task').description('tasks')
  task.command('get').option('--wait').option('--history <n>')
  task.command('cancel')
  task.command('list').option('--page-token <token>')
  a2a.command('hidden-thing', { hidden: true })
  a2a.command('card').command('get').option('--validate')
  registerCompletion(a2a)
  return a2a
}

const dir = mkdtempSync(join(tmpdir(), 'a2a-completion-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function script(shell: 'bash' | 'zsh' | 'fish'): string {
  const path = join(dir, `a2a.${shell}`)
  writeFileSync(path, completionScript(shell, completionTree(program()), 'a2a'))
  return path
}

function hasShell(shell: string): boolean {
  return spawnSync(shell, ['-c', 'exit 0'], { stdio: 'ignore' }).status === 0
}

/** What bash's completion function offers for the words typed so far (the last one being completed). */
function bashComplete(...words: string[]): string[] {
  const path = script('bash')
  const result = spawnSync(
    'bash',
    [
      '-c',
      'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _a2a; printf "%s\\n" "${COMPREPLY[@]}"',
      'bash',
      path,
      ...words,
    ],
    { encoding: 'utf8' },
  )
  expect(result.stderr).toBe('')
  expect(result.status).toBe(0)
  return result.stdout.split('\n').filter(Boolean).sort()
}

describe('bash', () => {
  it('completes a command from its start, and the subcommands of a command', () => {
    expect(bashComplete('a2a', 'ta')).toEqual(['task'])
    expect(bashComplete('a2a', 'task', '')).toEqual(['cancel', 'get', 'help', 'list'])
    expect(bashComplete('a2a', '')).toEqual(['card', 'completion', 'help', 'send', 'task'])
  })

  it("completes a command's long options, with the options of the commands above it", () => {
    expect(bashComplete('a2a', 'task', 'get', '--')).toEqual([
      '--agent-card',
      '--help',
      '--history',
      '--output',
      '--wait',
    ])
    expect(bashComplete('a2a', 'send', '--c')).toEqual(['--context-id'])
  })

  it("steps over an option's value, and offers an option's fixed values and an argument's choices", () => {
    expect(bashComplete('a2a', '--agent-card', 'task', 'send', '--s')).toEqual(['--stream'])
    expect(bashComplete('a2a', '-o', '')).toEqual(['json', 'text'])
    expect(bashComplete('a2a', 'task', '-o', 'j')).toEqual(['json'])
    expect(bashComplete('a2a', 'completion', '')).toEqual(['bash', 'fish', 'zsh'])
    // A value that is anything (a reference, a file): bash's own file names (complete -o default), not words.
    expect(bashComplete('a2a', 'task', 'get', '--history', '')).toEqual([])
  })

  it('never offers a hidden command', () => {
    expect(bashComplete('a2a', 'hi')).toEqual([])
  })
})

/**
 * What zsh's completion function adds for the words typed so far. Stand-ins for zsh's own: compadd keeps the
 * candidates that start with the word typed, as zsh's matching does; _files names itself.
 */
function zshComplete(...words: string[]): string[] {
  const result = spawnSync(
    'zsh',
    [
      '-c',
      'compdef() { :; }; _files() { print "<files>"; }; ' +
        'compadd() { shift; local w; for w in "$@"; do [[ $w == ${words[CURRENT]}* ]] && print -- $w; done; return 0; }; ' +
        'source "$1"; shift; words=("$@"); CURRENT=$#; _a2a',
      'zsh',
      script('zsh'),
      ...words,
    ],
    { encoding: 'utf8' },
  )
  expect(result.stderr).toBe('')
  expect(result.status).toBe(0)
  return result.stdout.split('\n').filter(Boolean).sort()
}

describe.skipIf(!hasShell('zsh') && !process.env.CI)('zsh (skipped where zsh is not installed, never in CI)', () => {
  it('parses', () => {
    const result = spawnSync('zsh', ['-n', script('zsh')], { encoding: 'utf8' })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
  })

  it('completes commands, subcommands, options and values', () => {
    expect(zshComplete('a2a', 'ta')).toEqual(['task'])
    expect(zshComplete('a2a', 'task', '')).toEqual(['cancel', 'get', 'help', 'list'])
    expect(zshComplete('a2a', 'send', '--c')).toEqual(['--context-id'])
    expect(zshComplete('a2a', '-o', '')).toEqual(['json', 'text'])
    expect(zshComplete('a2a', 'task', 'get', '--history', '')).toEqual(['<files>'])
  })
})

/** What fish offers for a command line (`complete -C`). */
function fishComplete(line: string): string[] {
  const result = spawnSync('fish', ['-c', 'source $argv[1]; complete -C $argv[2]', script('fish'), line], {
    encoding: 'utf8',
  })
  expect(result.stderr).toBe('')
  expect(result.status).toBe(0)
  return result.stdout.split('\n').filter(Boolean).sort()
}

describe.skipIf(!hasShell('fish') && !process.env.CI)('fish (skipped where fish is not installed, never in CI)', () => {
  it('parses', () => {
    const result = spawnSync('fish', ['--no-execute', script('fish')], { encoding: 'utf8' })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
  })

  it('completes commands, subcommands, options and values', () => {
    expect(fishComplete('a2a ta')).toEqual(['task'])
    expect(fishComplete('a2a task ')).toEqual(['cancel', 'get', 'help', 'list'])
    expect(fishComplete('a2a send --c')).toEqual(['--context-id'])
    expect(fishComplete('a2a --agent-card task send --s')).toEqual(['--stream'])
    expect(fishComplete('a2a -o ')).toEqual(['json', 'text'])
  })
})
