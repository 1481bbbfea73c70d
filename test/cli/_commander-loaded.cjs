// Preloaded (node --require) into `a2a start` by start-without-commander.test.ts: as the process exits it says on
// stderr whether commander's modules were loaded (commander is CommonJS, so every module of it is in require.cache).
const { sep } = require('node:path')

process.on('exit', () => {
  const loaded = Object.keys(require.cache).some((file) => file.includes(`${sep}node_modules${sep}commander${sep}`))
  process.stderr.write(`commander loaded: ${loaded}\n`)
})
