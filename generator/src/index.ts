// The generator is a command (`npm create a2a-agent`, `npx create-a2a-agent`); this is the one way to run it from
// code: the same flags, the same questions when a person is at the terminal, the same exit code. Everything else
// (options, templates, rendering) is internal and may change in any release. test/generator/index.test.ts pins it.

export type { CliIo } from './cli.js'
export { run } from './cli.js'
