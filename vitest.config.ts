import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'
import { runtimeSourceAliases } from './test/source-aliases.ts'
import { TIERS } from './test/tiers.ts'

const WORKERS = Math.max(2, availableParallelism() - 1)

export default defineConfig({
  resolve: { alias: runtimeSourceAliases },
  test: {
    // One vitest project per tier (test/tiers.ts): `vitest run --project unit` is the inner loop. Test files are
    // independent (free ports, their own temporary folders and key prefixes), so they run side by side, at least two
    // at a time even on two cores: most of a test's time is spent waiting on the processes and servers it started.
    projects: TIERS.map((tier) => ({
      extends: true,
      test: {
        name: tier.name,
        include: tier.include,
        exclude: tier.exclude ?? [],
        maxWorkers: tier.alone ? 1 : WORKERS,
        sequence: { groupOrder: tier.alone ? 1 : 0 },
      },
    })),
    // A redis-server and a PostgreSQL cluster for the suites that run on those stores.
    globalSetup: ['test/redis-setup.ts', 'test/postgres-setup.ts'],
    // Tests start agents, CLIs and servers as processes: a slow or loaded two-core machine takes several times what
    // an idle fast one does. A test fails by its assertion, not by the clock.
    testTimeout: 60_000,
    // Hooks start and stop servers and remove temporary projects: I/O that a loaded 2-core machine can slow
    // many times over. A hook that fails does so by throwing, not by the clock.
    hookTimeout: 60_000,
    teardownTimeout: 60_000,
    // A loaded machine can take seconds for what an idle one does in milliseconds (a webhook's delivery, a Redis
    // round trip): polls wait up to 8 s, yet fail with their own expectation well before the test's timeout.
    expect: { poll: { timeout: 8_000 } },
  },
})
