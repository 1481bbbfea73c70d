import { ConfigurationError } from '../errors.js'

/** A host name, an IPv4 address or an IPv6 one in brackets, then a port. */
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/

/**
 * The gRPC address the cards list (`host:port`, what a gRPC client dials), checked: `name` names the setting in the
 * error a bad one stops the start with.
 */
export function checkedPublicAddress(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined
  const match = HOST_PORT.exec(value)
  const port = Number(match?.[2])
  if (!match || port < 1 || port > 65535)
    throw new ConfigurationError(
      `${name} must be host:port as a gRPC client dials it, e.g. grpc.example.com:443 ` +
        `(got ${JSON.stringify(value.slice(0, 100))})`,
    )
  return value
}
