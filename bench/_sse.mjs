// A streamed JSON-RPC call read event by event as it arrives, each event stamped with its arrival time
// (performance.now() of this process), for the measures that time one event rather than a whole stream.
import { request } from 'node:http'
import { performance } from 'node:perf_hooks'

/**
 * POSTs `body` and reads the SSE answer. `next()` resolves with the next { data, at } (undefined once the
 * stream has ended); `ended` resolves with { status, bytesRead } (every byte the socket received: headers and
 * framing included); `close()` drops the connection.
 */
export function openSse(url, { headers, body }, timeoutMs = 30_000) {
  const queue = []
  const waiters = []
  let done = false
  let failure
  const push = (item) => (waiters.length ? waiters.shift()(item) : queue.push(item))
  const finish = (error) => {
    if (done) return
    done = true
    failure = error
    for (const waiter of waiters.splice(0)) waiter(undefined)
  }
  const payload = Buffer.from(body)
  const req = request(url, {
    method: 'POST',
    agent: false,
    timeout: timeoutMs,
    headers: { ...headers, accept: 'text/event-stream', 'content-length': payload.length },
  })
  const ended = new Promise((resolve, reject) => {
    req.once('response', (res) => {
      const status = res.statusCode
      if (status !== 200 || !String(res.headers['content-type']).startsWith('text/event-stream')) {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => (text += chunk))
        res.once('end', () => {
          const error = new Error(`HTTP ${status} ${res.headers['content-type']}: ${text.slice(0, 500)}`)
          finish(error)
          reject(error)
        })
        return
      }
      const socket = res.socket
      res.setEncoding('utf8')
      let buffer = ''
      res.on('data', (chunk) => {
        const at = performance.now()
        buffer += chunk
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = block
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5))
            .join('\n')
          if (data) push({ data: JSON.parse(data), at })
        }
      })
      res.once('end', () => {
        finish()
        resolve({ status, bytesRead: socket.bytesRead })
      })
      res.once('error', (error) => {
        finish(error)
        reject(error)
      })
    })
  })
  ended.catch(() => {})
  req.once('timeout', () => req.destroy(new Error(`no end of the stream from ${url} within ${timeoutMs} ms`)))
  req.once('error', (error) => finish(error))
  req.end(payload)
  return {
    next() {
      if (queue.length) return Promise.resolve(queue.shift())
      if (done) return failure ? Promise.reject(failure) : Promise.resolve(undefined)
      return new Promise((resolve, reject) =>
        waiters.push((item) => (item === undefined && failure ? reject(failure) : resolve(item))),
      )
    },
    ended,
    close: () => req.destroy(),
  }
}
