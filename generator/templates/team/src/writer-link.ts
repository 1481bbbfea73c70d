/**
 * Where the planner finds the writer, and the credential it calls it with. The writer is an A2A agent like any
 * other: the planner reads its card and talks to it over A2A, whether it runs in this server or elsewhere.
 */

let servedHere: string | undefined

/** Set by src/team.ts once the server listens: the writer's address in this very server. */
export function useWriterAt(url: string): void {
  servedHere = url
}

/**
 * The writer's address (its card under `.well-known/`): `WRITER_URL` when the writer is deployed apart, else the
 * writer of this server, at its listening address (`PORT`, `HOST`) when `a2a dev` or `a2a start` serves it (both
 * set them to where they listen: a2a dev moves to the next free port when PORT is busy).
 */
export function writerUrl(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.WRITER_URL?.trim()
  if (configured) return configured.endsWith('/') || configured.endsWith('.json') ? configured : `${configured}/`
  if (servedHere) return servedHere
  return `http://${reachableHost(env.HOST)}:${env.PORT?.trim() || '3000'}/writer/`
}

/** A server listening on every interface is reached on this machine's loopback address. */
function reachableHost(host: string | undefined): string {
  const name = host?.trim()
  if (!name || name === '0.0.0.0' || name === '::') return '127.0.0.1'
  return name.includes(':') ? `[${name}]` : name
}

/**
 * The planner's own credential for the writer: `WRITER_CREDENTIAL`, else the secret of the entry named `planner` in
 * this server's lists (`A2A_BEARER_TOKEN`, `A2A_API_KEY`). Never a client's: the writer's tasks belong to whoever
 * the credential names, so a client's would let that client list and read every brief and draft the planner had
 * written for anyone. None at all when neither is set: the writer then refuses, and the planner fails with why.
 */
export function writerCredentials(env: NodeJS.ProcessEnv = process.env): { bearer?: string; apiKey?: string } {
  const plannerEntry = (list: string | undefined) =>
    list
      ?.split(',')
      .map((entry) => entry.trim())
      .find((entry) => entry.startsWith('planner:'))
      ?.slice('planner:'.length)
  const given = env.WRITER_CREDENTIAL?.trim()
  const bearer = given || plannerEntry(env.A2A_BEARER_TOKEN)
  const apiKey = given || plannerEntry(env.A2A_API_KEY)
  return { ...(bearer && { bearer }), ...(apiKey && { apiKey }) }
}
