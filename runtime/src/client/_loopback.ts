/**
 * Whether a host name is this machine: `localhost`, 127.0.0.0/8, ::1 or an IPv4-mapped 127.x. A name is never
 * resolved; an address is first read as the URL standard reads it (`127.1`, `[0:0::1]`), so every spelling of one
 * counts. With only the URL parser, it runs wherever the client does. Takes a URL's `hostname` (brackets or not).
 */
export function isLoopbackHost(hostname: string): boolean {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  if (bare === 'localhost') return true
  let host: string
  try {
    host = new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname
  } catch {
    return false
  }
  return (
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
    host === '[::1]' ||
    /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(host)
  )
}
