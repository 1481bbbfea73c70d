import { defineConfig } from 'vitest/config'
import { runtimeSourceAliases } from './test/source-aliases.ts'

// `npm run soak`: the long mixed soak (test/soak/*.soak.ts), kept out of `npm test` (whose include is
// test/**/*.test.ts). The agent under test runs as a child process on the built runtime; the aliases are the same
// as in vitest.config.ts for anything a soak imports in-process.
export default defineConfig({
  resolve: { alias: runtimeSourceAliases },
  test: {
    include: ['test/soak/**/*.soak.ts'],
    // The soak's own length (SOAK_SECONDS) sets its test's timeout.
    testTimeout: 15_000,
    // The agents under attack run on a 512 MiB heap, the size the defaults are made for (SECURITY.md): the
    // processes the soaks start inherit this.
    env: { NODE_OPTIONS: '--max-old-space-size=512' },
    hookTimeout: 30_000,
  },
})
