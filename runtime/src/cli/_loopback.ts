import { BlockList, isIP } from 'node:net'

const LOOPBACK = new BlockList()
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4')
LOOPBACK.addAddress('::1', 'ipv6')

/** Whether a URL's hostname is this machine: `localhost`, 127.0.0.0/8 or ::1 (a name is never resolved). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  if (host === 'localhost') return true
  const family = isIP(host)
  return family !== 0 && LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6')
}
