import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP, type LookupFunction } from 'node:net'
import { ConfigurationError } from '../errors.js'

/**
 * The SSRF guard for webhooks: a client must not make the agent's server call addresses only the server can
 * reach (its own loopback, the private network, link-local cloud metadata). Checked when a webhook is
 * configured and again as each connection is made (DNS may answer differently the second time).
 */

/** Ranges no webhook may resolve to unless allowed: loopback, private, shared, link-local, metadata, reserved. */
const BLOCKED_RANGES: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'], // "this network"; 0.0.0.0 reaches the local host
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'], // link-local, incl. 169.254.169.254 cloud metadata
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments (incl. 192.0.0.192 Oracle metadata)
  ['192.0.2.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved and broadcast
  // IPv4-compatible addresses (::a.b.c.d, deprecated) embed an IPv4 address and include :: and ::1.
  ['::', 96, 'ipv6'],
  // SIIT IPv4-translated addresses (::ffff:0:a.b.c.d) embed one too; a translator would reach it.
  ['::ffff:0:0:0', 96, 'ipv6'],
  // IPv4-mapped addresses (::ffff:a.b.c.d) are checked against the IPv4 ranges by BlockList itself; a rule
  // for ::ffff:0:0/96 would match every IPv4 address.
  ['64:ff9b::', 96, 'ipv6'], // NAT64 can reach any IPv4 address
  ['64:ff9b:1::', 48, 'ipv6'], // local-use NAT64
  ['2001::', 32, 'ipv6'], // Teredo embeds an IPv4 address
  ['2002::', 16, 'ipv6'], // 6to4 embeds an IPv4 address
  ['fec0::', 10, 'ipv6'], // deprecated site-local
  ['100::', 64, 'ipv6'], // discard
  ['2001:db8::', 32, 'ipv6'],
  ['fc00::', 7, 'ipv6'], // unique local, incl. fd00:ec2::254 (AWS metadata)
  ['fe80::', 10, 'ipv6'], // link-local
  ['ff00::', 8, 'ipv6'], // multicast
]

/** Host names of metadata services that some platforms resolve without DNS. */
const BLOCKED_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
])

const blocked = new BlockList()
for (const [address, prefix, family] of BLOCKED_RANGES) blocked.addSubnet(address, prefix, family)

export interface AddressPolicy {
  /** Addresses and CIDR ranges let through although private (development, a trusted internal receiver). */
  allow: BlockList
  /** `http:` webhooks are refused unless this is set. */
  allowHttp: boolean
}

/** Reads `127.0.0.1`, `10.0.0.0/8`, `::1`… into a policy; a bad entry stops start-up, naming it. */
export function addressPolicy(allow: readonly string[], allowHttp: boolean, source = 'push.allow'): AddressPolicy {
  const list = new BlockList()
  for (const raw of allow) {
    const entry = raw.trim()
    if (!entry) continue
    const [address = '', prefixText] = entry.split('/')
    const family = isIP(address)
    const prefix = prefixText === undefined ? (family === 6 ? 128 : 32) : Number(prefixText)
    if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
      throw new ConfigurationError(
        `${source}: ${JSON.stringify(entry)} is not an IP address or CIDR range (e.g. 127.0.0.1 or 10.0.0.0/8)`,
      )
    }
    list.addSubnet(address, prefix, family === 6 ? 'ipv6' : 'ipv4')
  }
  return { allow: list, allowHttp }
}

const familyOf = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 6 ? 'ipv6' : 'ipv4')

/** Why the address may not be called, or `undefined` when it may. */
export function refusedAddress(address: string, policy: AddressPolicy): string | undefined {
  const family = familyOf(address)
  if (policy.allow.check(address, family)) return undefined
  if (blocked.check(address, family)) return `${address} is a loopback, private, link-local or reserved address`
  return undefined
}

/** Strips the brackets of an IPv6 literal host (`[::1]`). */
export const bareHost = (hostname: string): string => (hostname.startsWith('[') ? hostname.slice(1, -1) : hostname)

/**
 * Why `url` may not be a webhook, or `undefined`: scheme, credentials in the URL, and every address its host
 * resolves to. `resolve` is `dns.lookup` except in tests.
 */
export async function refusedWebhook(
  url: URL,
  policy: AddressPolicy,
  resolve = lookupAll,
): Promise<string | undefined> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `must be an https: URL (got ${url.protocol})`
  if (url.protocol === 'http:' && !policy.allowHttp)
    return 'must be an https: URL (http: webhooks are refused unless the server allows them: A2A_PUSH_ALLOW_HTTP)'
  if (url.username || url.password) return 'must not carry credentials; give them in `authentication` or `token`'
  const host = bareHost(url.hostname).toLowerCase()
  if (BLOCKED_NAMES.has(host.replace(/\.$/, ''))) return `${host} is a cloud metadata service`
  let addresses: string[]
  if (isIP(host)) addresses = [host]
  else {
    try {
      addresses = (await resolve(host)).map((entry) => entry.address)
    } catch (error) {
      return `host ${host} could not be resolved${(error as NodeJS.ErrnoException).code === 'ENOTFOUND' ? '' : ' (DNS error)'}`
    }
  }
  for (const address of addresses) {
    const why = refusedAddress(address, policy)
    if (!why) continue
    // The client learns that its host is refused, not the address it resolves to (an internal name's address
    // is not its business).
    return host === address ? why : `${host} resolves to a loopback, private, link-local or reserved address`
  }
  return undefined
}

const lookupAll = (host: string): Promise<LookupAddress[]> =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  )

/**
 * A `lookup` for `http.request` that refuses, at connect time, an address the policy does not allow: the
 * name is resolved once more for the connection itself, so a DNS answer that changed since the webhook was
 * configured (DNS rebinding) cannot reach a private address.
 */
export function guardedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '')
      for (const entry of addresses) {
        const why = refusedAddress(entry.address, policy)
        if (why)
          return callback(Object.assign(new Error(`${hostname} resolves to ${why}`), { code: 'EA2ABLOCKED' }), '')
      }
      if (options.all) return callback(null, addresses)
      const first = addresses[0]
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '')
      callback(null, first.address, first.family)
    })
  }
}
