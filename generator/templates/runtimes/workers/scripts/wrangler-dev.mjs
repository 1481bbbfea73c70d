// `npm run dev` and `npm start`: `wrangler dev` on PORT and HOST (3000 and 127.0.0.1 unless set), where the agent
// listens on every runtime. A script rather than `--port $PORT` in package.json, which Windows' shell would not
// expand; wrangler's own script, run by this Node, so no shell stands between it and Ctrl-C.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const wrangler = join(dirname(createRequire(import.meta.url).resolve('wrangler/package.json')), 'bin/wrangler.js')
const port = process.env.PORT || '3000'
const host = process.env.HOST || '127.0.0.1'
const child = spawn(process.execPath, [wrangler, 'dev', '--port', port, '--ip', host, ...process.argv.slice(2)], {
  stdio: 'inherit',
})

// A signal sent to this process alone (a process manager's SIGTERM) reaches wrangler too.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
