import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { OAuthServer } from '../../fixtures/oauth-server.ts'
import type { Agents } from './agents.ts'
import { a2a, type Run, type RunOptions } from './cli.ts'
import type { Observations, Outcome } from './outcome.ts'
import { type RawAgent, type RawAgentOptions, type Script, startRawAgent } from './raw-agent.ts'

/** What every check gets: the shared agents, a way to run the CLI, and scripted agents and folders of its own. */
export interface Context {
  agents: Agents
  oauth: OAuthServer
  /** A self-signed certificate for 127.0.0.1, when openssl could make one. */
  tls: { key: string; cert: string } | undefined
  /** `a2a <args>` in a folder of this check's own (no `.env` above it), with a configuration folder of its own. */
  run(args: string[], options?: Partial<RunOptions>): Promise<Run>
  /** A scripted agent, closed after every check has run. */
  raw(script: Script, options?: RawAgentOptions): Promise<RawAgent>
  /** A new empty folder, removed after every check has run. */
  folder(): string
  /** This check's working folder (the `cwd` of `run`). */
  cwd: string
  /** This check's configuration folder (`XDG_CONFIG_HOME` of `run`). */
  configHome: string
}

/** One check per requirement: what it exercises (the test's name) and how. */
export interface Check {
  id: string
  /** What the check does, in a few words: the evidence's test name. */
  how: string
  /** How long it may take (default 30 s). */
  timeoutMs?: number
  /**
   * Observes the CLI. Returns nothing to let the observations decide, or an outcome that is not a pass (what the
   * check saw proves the tool lacks the feature, or it could not be exercised).
   */
  run(context: Context, observe: Observations): Promise<Outcome | undefined>
}

/** Shared by every check: closed and removed once all have run. */
export interface Shared {
  agents: Agents
  oauth: OAuthServer
  tls: { key: string; cert: string } | undefined
  root: string
  rawAgents: RawAgent[]
}

export function contextFor(check: Check, shared: Shared): Context {
  const folder = () => mkdtempSync(join(shared.root, `${check.id.toLowerCase()}-`))
  const cwd = folder()
  const configHome = join(cwd, '.config')
  return {
    agents: shared.agents,
    oauth: shared.oauth,
    tls: shared.tls,
    cwd,
    configHome,
    folder,
    run: (args, options = {}) =>
      a2a(check.id, args, {
        cwd,
        ...options,
        env: { XDG_CONFIG_HOME: configHome, HOME: cwd, ...options.env },
      }),
    raw: async (script, options) => {
      const agent = await startRawAgent(script, options)
      shared.rawAgents.push(agent)
      return agent
    },
  }
}

export const sharedRoot = () => mkdtempSync(join(tmpdir(), 'a2a-compliance-'))
