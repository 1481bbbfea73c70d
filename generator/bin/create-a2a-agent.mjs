#!/usr/bin/env node
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

// In a clone, dist/ exists only once built: say so in one line rather than with a module-resolution stack.
const entry = new URL('../dist/index.js', import.meta.url)
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write(
    `create-a2a-agent is not built (${fileURLToPath(entry)} is missing): run \`npm run build\` in its repository first.\n`,
  )
  process.exit(1)
}
const { run } = await import(entry.href)
process.exitCode = await run()
