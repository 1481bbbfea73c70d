#!/usr/bin/env node
import module from 'node:module'

// V8's compile cache (Node 22.1 and later; Node 20 has none): a start after the first reads the CLI's and the
// runtime's compiled code instead of compiling it again. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
module.enableCompileCache?.()

// Imported after the cache is on, so that the modules it loads use it.
const { main } = await import('../dist/cli/main.js')
await main()
