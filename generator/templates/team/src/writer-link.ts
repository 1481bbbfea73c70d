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
 * writer of this server, at its listening address (`PORT`, `HOST`) when another server (`a2a start`) serves it.
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
 * The credential the planner shows the writer: `WRITER_CREDENTIAL`, else the first of this server's own
 * (`A2A_BEARER_TOKEN`, `A2A_API_KEY`; the secret of a `name:secret` entry), since both agents accept the same.
 */
export function writerCredentials(env: NodeJS.ProcessEnv = process.env): { bearer?: string; apiKey?: string } {
  const first = (list: string | undefined) => {
    const entry = list?.split(',')[0]?.trim()
    return entry ? entry.replace(/^[A-Za-z][\w.-]{0,63}:/, '') : undefined
  }
  const given = env.WRITER_CREDENTIAL?.trim()
  const bearer = given || first(env.A2A_BEARER_TOKEN)
  const apiKey = given || first(env.A2A_API_KEY)
  return { ...(bearer && { bearer }), ...(apiKey && { apiKey }) }
}
