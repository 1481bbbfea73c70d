import { DEV_ADDRESS_FILE, runningDevAddress } from '../dev/_address.js'
import { envValue } from '../settings.js'
import { agentBase } from './_client.js'
import { loadDotEnv } from './_env.js'

export interface AgentAddress {
  base: URL
  /** Why this address, when the user did not give it: shown beside it so the agent addressed is never a guess. */
  via?: string
}

/**
 * The agent a command talks to, and loads the project's `.env` (credentials for an agent on this machine):
 * 1. `--url`;
 * 2. `PORT` set in the command's own environment (the user asked for that port): http://localhost:PORT/;
 * 3. this project's running `a2a dev` (`.a2a/dev.json`, written by it), when its process is alive and answers
 *    (only an http address on this machine, in the user's own plain file, is believed: a repository could ship one);
 * 4. `PORT` from the project's `.env`, else 3000.
 * The dev server's file beats `.env`'s PORT because that PORT is only where `a2a dev` tries first.
 */
export async function chooseAgent(cwd: string, url: string | undefined): Promise<AgentAddress> {
  const shellPort = envValue(process.env, 'PORT')
  loadDotEnv(cwd)
  if (url !== undefined) return { base: agentBase(url) }
  const found = runningDevAddress(cwd)
  // Said apart from the address line, so it shows also with --json: a file that was not believed may be planted.
  if (found && 'ignored' in found) process.stderr.write(`${DEV_ADDRESS_FILE} ignored: ${found.ignored}\n`)
  const dev = found && 'url' in found ? found.url : undefined
  if (shellPort) {
    const base = agentBase(`http://localhost:${shellPort}/`)
    const elsewhere = dev && new URL(dev).port !== base.port ? `; this project's a2a dev is at ${dev}` : ''
    return { base, via: `PORT=${shellPort}${elsewhere}` }
  }
  if (dev && (await answers(dev))) return { base: agentBase(dev), via: "this project's a2a dev" }
  const envPort = envValue(process.env, 'PORT')
  const port = envPort ?? '3000'
  const stale = dev ? `; ${DEV_ADDRESS_FILE} names ${dev}, which does not answer` : ''
  return { base: agentBase(`http://localhost:${port}/`), via: `${envPort ? 'PORT from .env' : 'default port'}${stale}` }
}

/** Anything answering at the address counts: a dev server whose code is broken still answers (503). */
async function answers(url: string): Promise<boolean> {
  try {
    await (await fetch(new URL('.well-known/agent.json', url), { signal: AbortSignal.timeout(3000) })).arrayBuffer()
    return true
  } catch {
    return false
  }
}
