import type { Command } from 'commander'
import { createConsoleLogger, LOG_RANK, type LogFormat, type LogLevel, logFormat, logLevel } from '../logger.js'
import { serveAgent } from '../node/serve.js'
import { envValue } from '../settings.js'
import { announceListening, loadDotEnv } from './_env.js'
import { chooseEntry, loadAgent } from './_load-agent.js'
import { portSetting } from './_port.js'

interface StartFlags {
  port?: string
  host?: string
  publicUrl?: string
  logLevel?: LogLevel
  logFormat?: LogFormat
  requestLog?: LogLevel
}

export function registerStart(program: Command): void {
  program
    .command('start')
    .description('Serve the agent for production: no watcher, graceful shutdown on SIGTERM/SIGINT')
    .argument('[entry]', 'the agent module, or a folder of agents (default: src/agent.ts, else src/agents/)')
    .option('-p, --port <port>', 'port to listen on (default: PORT, else 3000)')
    .option('-H, --host <host>', 'interface to listen on (default: HOST, else 127.0.0.1)')
    .option('--public-url <url>', "the card's url behind a proxy (default: A2A_PUBLIC_URL)")
    .option('--log-level <level>', 'debug, info, warn, error or silent (default: A2A_LOG_LEVEL, else info)')
    .option('--log-format <format>', 'text, or json: one object per line (default: A2A_LOG_FORMAT, else text)')
    .option(
      '--request-log <level>',
      'the level of the one line logged per request (default: A2A_REQUEST_LOG, else debug)',
    )
    .action(async (given: string | undefined, flags: StartFlags) => {
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
      const requestLogLevel =
        requestLog !== 'silent' && LOG_RANK[requestLog] >= LOG_RANK[level] ? requestLog : undefined
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
    })
}
