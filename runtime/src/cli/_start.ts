import type { Command } from 'commander'
import { createConsoleLogger, LOG_RANK, logFormat, logLevel } from '../logger.js'
import { serveAgent } from '../node/serve.js'
import { envValue } from '../settings.js'
import { announceListening, loadDotEnv } from './_env.js'
import { chooseEntry, loadAgent } from './_load-agent.js'
import { portSetting } from './_port.js'
import { exitOnProjectFailure } from './_project-failure.js'
import { commanderFlags, plainStartArgs, START_OPTIONS, type StartFlags } from './_start-flags.js'

export function registerStart(program: Command): void {
  const command = program
    .command('start')
    .description('Serve the agent for production: no watcher, graceful shutdown on SIGTERM/SIGINT')
    .argument('[entry]', 'the agent module, or a folder of agents (default: src/agent.ts, else src/agents/)')
  for (const option of START_OPTIONS) command.option(commanderFlags(option), option.description)
  command.action(runStart)
}

/**
 * `a2a start <args>` without commander, which a start would otherwise load and build the option tree of (a cold
 * start pays for every module it reads): when the arguments are plain (`plainStartArgs`) it serves the agent and
 * answers true; otherwise it answers false at once, having done nothing, and commander reads them.
 */
export async function startWithoutCommander(args: readonly string[]): Promise<boolean> {
  const plain = plainStartArgs(args)
  if (!plain) return false
  try {
    await runStart(plain.entry, plain.flags)
  } catch (error) {
    exitOnProjectFailure(error)
    throw error
  }
  return true
}

/** Serves the entry given (else `src/agent.ts`, else the folder `src/agents/`) with the options given. */
async function runStart(given: string | undefined, flags: StartFlags): Promise<void> {
  const cwd = process.cwd()
  const { entry, folder } = chooseEntry(cwd, given)
  loadDotEnv(cwd)
  const level =
    logLevel(flags.logLevel, '--log-level') ??
    logLevel(envValue(process.env, 'A2A_LOG_LEVEL'), 'A2A_LOG_LEVEL') ??
    'info'
  const format = logFormat(flags.logFormat, '--log-format')
  const logger = createConsoleLogger(level, process.env, format)
  const requestLog =
    logLevel(flags.requestLog, '--request-log') ??
    logLevel(envValue(process.env, 'A2A_REQUEST_LOG'), 'A2A_REQUEST_LOG') ??
    'debug'
  // Below the log level the request line would be dropped anyway: skip the work on every request.
  const requestLogLevel = requestLog !== 'silent' && LOG_RANK[requestLog] >= LOG_RANK[level] ? requestLog : undefined
  // Checked before the agent loads: a bad PORT is said at once, in one line.
  const port = portSetting(flags.port, process.env)
  // The project's own code (a planner calling its writer at PORT and HOST) finds the server where the flags put it.
  announceListening({ PORT: port === 0 ? undefined : String(port), HOST: flags.host })
  const publicUrl = flags.publicUrl ?? envValue(process.env, 'A2A_PUBLIC_URL')
  const options = {
    logger,
    ...(requestLogLevel && { requestLogLevel }),
    port,
    ...(flags.host !== undefined && { hostname: flags.host }),
    ...(publicUrl && { publicUrl }),
  }
  if (folder) {
    // A folder of agents: loaded only when asked for, so a single agent's start reads none of it.
    const { startAgents } = await import('./_start-agents.js')
    return startAgents(cwd, entry, options)
  }
  const { agent } = await loadAgent(cwd, entry)
  await serveAgent(agent, options)
}
