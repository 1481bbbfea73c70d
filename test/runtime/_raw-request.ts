import { connect } from 'node:net'

/**
 * Sends a request written out as bytes (what node:http will not send: repeated header lines, odd targets) and
 * resolves with the status line once the server has answered and closed.
 */
export function rawRequest(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' })
    let received = ''
    socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve(received.split('\r\n', 1)[0]!))
    socket.write(request)
  })
}
