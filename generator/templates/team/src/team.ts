import { type A2AAgentsServer, type ServeOptions, serveAgents } from 'a2a-runtime'
import planner from './agents/planner.ts'
import writer from './agents/writer.ts'
import { useWriterAt } from './writer-link.ts'

/** The agents of this server, each at the path of its name: the planner at /planner/, the writer at /writer/. */
export const agents = { planner, writer }

/**
 * Serves both agents from one server (`PORT`, `HOST`, `A2A_PUBLIC_URL`, `A2A_STORE`… as `serveAgents` reads them),
 * and points the planner at this server's writer, on its listening address, unless `WRITER_URL` names another.
 */
export async function serveTeam(options: ServeOptions = {}): Promise<A2AAgentsServer> {
  const server = await serveAgents(agents, options)
  const listening = new URL(server.url)
  // A server on every interface prints `localhost`, which may resolve to an address it does not listen on.
  if (listening.hostname === 'localhost') listening.hostname = '127.0.0.1'
  useWriterAt(new URL('writer/', listening).href)
  return server
}
