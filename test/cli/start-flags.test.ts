import { Command, CommanderError } from 'commander'
import { describe, expect, it } from 'vitest'
import { registerStart } from '../../runtime/src/cli/_start.ts'
import { plainStartArgs, type StartFlags } from '../../runtime/src/cli/_start-flags.ts'

// `a2a start` reads plain arguments without commander (plainStartArgs) and leaves the rest to commander: whatever
// it reads, it must read as commander reads it from the command registerStart declares.

/** What commander hands `a2a start`'s action for `args`, or 'usage error' / 'help'. */
function commanderReads(args: string[]): { entry: string | undefined; flags: StartFlags } | string {
  const program = new Command('a2a').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} })
  registerStart(program)
  let read: { entry: string | undefined; flags: StartFlags } | undefined
  program.commands[0]!.action((entry: string | undefined, flags: StartFlags) => {
    read = { entry, flags: { ...flags } }
  })
  try {
    program.parse(['node', 'a2a', 'start', ...args])
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error
    return error.exitCode === 0 ? 'help' : 'usage error'
  }
  return read!
}

const PLAIN: string[][] = [
  [],
  ['src/agent.ts'],
  ['src/agents/'],
  ['--port', '8080'],
  ['--port=8080'],
  ['-p', '8080'],
  ['-H', '0.0.0.0', '--port', '9000'],
  ['--host=0.0.0.0', 'src/agent.ts', '--log-level', 'debug'],
  ['--public-url', 'https://agents.example/a/', '--log-format', 'json', '--request-log', 'info'],
  ['--port', '1', '--port', '2'],
  ['--port', ''],
  ['--log-level=', 'src/x.ts'],
  ['--port', 'abc'],
  ['src/agent.ts', '--public-url=https://a.example/?x=1=2'],
]

const NOT_PLAIN: string[][] = [
  ['--help'],
  ['-h'],
  ['--version'],
  ['--bogus'],
  ['--port'],
  ['-p'],
  ['--port', '-1'],
  ['-p8080'],
  ['-p=8080'],
  ['--', 'src/agent.ts'],
  ['src/a.ts', 'src/b.ts'],
  ['--log-level', '--port', '1'],
  ['-pH', '1'],
]

describe("a2a start's arguments without commander", () => {
  it.each(PLAIN)('reads %j as commander does', (...args) => {
    const plain = plainStartArgs(args)
    expect(plain).toBeDefined()
    expect(plain).toEqual(commanderReads(args))
  })

  it.each(NOT_PLAIN)('leaves %j to commander', (...args) => {
    expect(plainStartArgs(args)).toBeUndefined()
  })
})
