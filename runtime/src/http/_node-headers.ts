import type { IncomingHttpHeaders } from 'node:http'

/**
 * The headers Node's parser read, for a request Node delivered (srvx's Request on Node carries them), or
 * `undefined` for any other Request (`app.fetch`, Bun, Deno, Workers). A header read there is a property read,
 * where the Request's `headers.get` scans the raw headers for names such as `Host` and `Content-Type` and tests a
 * pattern for an absent one: the few reads of every request cost about as much as the web-origin check itself.
 * Node keeps the first of repeated `Host`, `Content-Type` and `Content-Length` lines (as its own URL and body
 * handling do) and joins other repeats with ", ", as `Headers` does.
 */
export function nodeHeadersOf(request: Request): IncomingHttpHeaders | undefined {
  return (request as { runtime?: { node?: { req?: { headers: IncomingHttpHeaders } } } }).runtime?.node?.req?.headers
}

/** A header of a request (a lower-case name that Node never gives as a list), read where it costs least. */
export function headerOf(
  request: Request,
  name: 'host' | 'origin' | 'content-type' | 'content-length' | 'a2a-version',
): string | null {
  const node = nodeHeadersOf(request)
  return node ? ((node[name] as string | undefined) ?? null) : request.headers.get(name)
}
