import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { echoAgent } from './_agents.ts'
import { nodeServer } from './_transports.ts'

/**
 * A body over the limit is answered (413) before it is read; the client may go on sending a while before it reads.
 * Closed at once, the server's kernel would answer those bytes with a reset, and the reset makes the client's kernel
 * drop the 413 it holds unread. The server lingers instead: the answer is still there when the client reads it.
 */
it('a client that keeps sending after its body was refused, and reads only later, still reads the 413', async () => {
  const target = await nodeServer.start(echoAgent)
  const { hostname, port } = new URL(target.url)
  const socket = connect(Number(port), hostname)
  socket.pause() // reads nothing until the end: what the server sends waits in the kernel
  let ended = ''
  socket.on('error', (error: NodeJS.ErrnoException) => (ended = error.code ?? error.message))
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(
    `POST / HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${8 * 1024 * 1024}\r\n\r\n`,
  )
  const chunk = Buffer.alloc(256 * 1024, 'x')
  // Past the 1 MiB limit: the server answers 413 and closes its side.
  for (let i = 0; i < 6; i++) socket.write(chunk)
  await sleep(300)
  // More of the body after the answer went out: closed at once, the server would reset the connection here.
  for (let i = 0; i < 4 && !socket.destroyed; i++) {
    socket.write(chunk)
    await sleep(50)
  }
  await sleep(200)
  const received: Buffer[] = []
  socket.on('data', (data: Buffer) => received.push(data))
  socket.resume()
  await new Promise((resolve) => {
    socket.once('close', resolve)
    setTimeout(resolve, 5000).unref()
  })
  const text = Buffer.concat(received).toString('latin1')
  expect(text, `the connection ended with ${ended || 'nothing read'}`).toMatch(/^HTTP\/1\.1 413 /)
  expect(text).toContain('the body exceeds the limit')
  socket.destroy()
})
