// Preloaded (NODE_OPTIONS=--require) into a command under test that must not talk to another machine: a TCP
// connect to anything but loopback fails at once, before any packet leaves, and says so on stderr, where the
// test looks for it.
const net = require('node:net')

const loopback = new net.BlockList()
loopback.addSubnet('127.0.0.0', 8, 'ipv4')
loopback.addAddress('::1', 'ipv6')

function isLoopback(host) {
  const bare = String(host ?? 'localhost')
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase()
  if (bare === 'localhost') return true
  const family = net.isIP(bare)
  return family !== 0 && loopback.check(bare, family === 4 ? 'ipv4' : 'ipv6')
}

const connect = net.Socket.prototype.connect
net.Socket.prototype.connect = function (...args) {
  const options =
    typeof args[0] === 'object' && args[0] !== null
      ? Array.isArray(args[0])
        ? args[0][0]
        : args[0]
      : { port: args[0], host: args[1] }
  if (options && options.path === undefined && !isLoopback(options.host)) {
    process.stderr.write(`OFF-MACHINE CONNECT REFUSED: ${options.host}:${options.port}\n`)
    const error = Object.assign(new Error(`connect to ${options.host} refused by the test`), { code: 'ECONNREFUSED' })
    process.nextTick(() => this.destroy(error))
    return this
  }
  return connect.apply(this, args)
}
