// One-off requests the bench makes itself (not load): the correctness checks before a server is loaded, and
// the ListTasks count after the memory run. No keep-alive, so nothing lingers between phases.
import { request } from 'node:http'

/** POST `body`; resolves with { status, contentType, text }. */
export function post(url, { headers, body }, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(body)
    const req = request(
      url,
      { method: 'POST', agent: false, timeout: timeoutMs, headers: { ...headers, 'content-length': payload.length } },
      (res) => {
        res.setEncoding('utf8')
        let text = ''
        res.on('data', (chunk) => (text += chunk))
        res.once('end', () =>
          resolve({ status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), text }),
        )
        res.once('error', reject)
      },
    )
    req.once('timeout', () => req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)))
    req.once('error', reject)
    req.end(payload)
  })
}

/** The JSON answer to a request/response call; throws unless HTTP 200 with JSON. */
export async function postJson(url, request) {
  const { status, contentType, text } = await post(url, request)
  if (status !== 200 || !contentType.includes('json'))
    throw new Error(`HTTP ${status} ${contentType}: ${text.slice(0, 500)}`)
  return JSON.parse(text)
}

/** The parsed `data:` events of a streamed call; throws unless HTTP 200 text/event-stream. */
export async function postStream(url, request) {
  const { status, contentType, text } = await post(url, request)
  if (status !== 200 || !contentType.startsWith('text/event-stream'))
    throw new Error(`HTTP ${status} ${contentType}: ${text.slice(0, 500)}`)
  // An event's block may carry other fields (`id:` first, as A2A v1.0 streams number their events).
  return text
    .split('\n\n')
    .map((block) => block.split('\n').find((line) => line.startsWith('data:')))
    .filter((data) => data !== undefined)
    .map((data) => JSON.parse(data.slice(5)))
}
