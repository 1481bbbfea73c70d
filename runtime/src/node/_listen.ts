import type { Server } from 'node:http'
import { ConfigurationError } from '../errors.js'
import { type Env, envValue } from '../settings.js'

/** The port from the option, else `PORT`, else 3000; one outside 0–65535 is a ConfigurationError. */
export function readPort(option: number | undefined, env: Env): number {
  const portText = envValue(env, 'PORT')
  const port = option ?? (portText === undefined ? 3000 : Number(portText))
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigurationError(`The port must be an integer from 0 to 65535 (got ${option ?? portText})`)
  return port
}

/** Listens; a port in use or out of reach is a ConfigurationError that says what to do. */
export function listen(server: Server, port: number, hostname: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE')
        reject(
          new ConfigurationError(
            `Port ${port} on ${hostname} is already in use: stop the other server or choose another port (PORT)`,
          ),
        )
      else if (error.code === 'EACCES')
        reject(
          new ConfigurationError(
            `No permission to listen on port ${port} on ${hostname}: choose a port above 1023 (PORT)`,
          ),
        )
      else reject(error)
    })
    server.listen(port, hostname, () => {
      server.removeAllListeners('error')
      resolve()
    })
  })
}

/** How the listening address reads in a URL: a wildcard as `localhost`, an IPv6 address in brackets. */
export function displayHost(hostname: string): string {
  if (hostname === '0.0.0.0' || hostname === '::') return 'localhost'
  return hostname.includes(':') ? `[${hostname}]` : hostname
}
