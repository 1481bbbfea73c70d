// The test tiers, by what a test needs to run (README, "Tests"). Every test file belongs to exactly one tier:
// test/repo/tiers.test.ts asks vitest itself which files each tier runs. A new test file under a folder a tier
// owns joins that tier; one that starts processes in a folder of in-process tests is named in `processes`.

/** The longest: agent processes on a limited heap under floods and the short soak (attacks on the budgets). */
const attacks = [
  'test/runtime/amplification.test.ts',
  'test/runtime/connection-caps.test.ts',
  'test/runtime/grpc-attacks.test.ts',
  'test/runtime/soak-short.test.ts',
  'test/runtime/streaming-flood.test.ts',
]

/** Runtime tests that start agent processes (the CLI, a fixture agent, a Redis Cluster) and talk to them. */
const runtimeProcesses = [
  'test/runtime/auth-hardening.test.ts',
  'test/runtime/backpressure.test.ts',
  'test/runtime/file-disk-full.test.ts',
  'test/runtime/file-lock.test.ts',
  'test/runtime/file-log.test.ts',
  'test/runtime/file-restart.test.ts',
  'test/runtime/file-store.test.ts',
  'test/runtime/grpc-process.test.ts',
  'test/runtime/health-shutdown.test.ts',
  'test/runtime/health-stores.test.ts',
  'test/runtime/load.test.ts',
  'test/runtime/logs-start.test.ts',
  'test/runtime/postgres-faults.test.ts',
  'test/runtime/redis-cluster-harness.test.ts',
  'test/runtime/redis-cluster.test.ts',
  'test/runtime/redis-owners.test.ts',
  'test/runtime/serve.test.ts',
  'test/runtime/slow-clients.test.ts',
  'test/runtime/store-bytes.test.ts',
  'test/runtime/store-instances.test.ts',
  'test/runtime/task-budgets.test.ts',
  'test/runtime/telemetry-client-cli.test.ts',
  'test/runtime/web-origin.test.ts',
]

/** Generator tests on the built packages: projects rendered without installing them, the prompts answered. */
const generatorProcesses = [
  'test/generator/template-*.test.ts',
  'test/generator/prompts-answers.test.ts',
  'test/generator/deploy-prompts.test.ts',
  'test/generator/requirements.test.ts',
]

/** Tests that generate projects, install them and run them, or pack and publish the packages. */
const projectSuites = [
  'test/demo.test.ts',
  'test/bench/**/*.test.ts',
  'test/release/**/*.test.ts',
  'test/generator/cli.test.ts',
  'test/generator/cli-pty.test.ts',
  'test/generator/combinations.test.ts',
  'test/generator/deploy-serve.test.ts',
  'test/generator/deploy-warm-start.test.ts',
  'test/generator/e2e.test.ts',
  'test/generator/telemetry.test.ts',
]

/** Tests on runtimes other than the one running vitest: Bun, Deno, workerd, and Node 20, 22 and 24. */
const otherRuntimes = [
  'test/cross-runtime/**/*.test.ts',
  'test/generator/e2e-runtimes.test.ts',
  'test/runtime/heap-bytes.test.ts',
]

/** Tests that drive Debian's Chromium. */
const browser = ['test/inspector/**/*.test.ts']

export interface Tier {
  name: string
  /** What it needs, for `npm run test:<name>`'s reader. */
  needs: string
  include: string[]
  exclude?: string[]
  /**
   * Files of this tier run one at a time, in a group of their own after the others': the attacks measure an agent
   * process's heap and its cut-off times, which a second test's processes on the same cores would blur.
   */
  alone?: boolean
}

export const TIERS: Tier[] = [
  {
    name: 'unit',
    needs: 'nothing but Node, redis-server and PostgreSQL: the runtime and the generator in-process, on their sources',
    include: [
      'test/runtime/**/*.test.ts',
      'test/client/**/*.test.ts',
      'test/adapters/**/*.test.ts',
      'test/interop/**/*.test.ts',
      'test/repo/**/*.test.ts',
      'test/generator/*.test.ts',
    ],
    exclude: [...attacks, ...runtimeProcesses, ...generatorProcesses, ...projectSuites, ...otherRuntimes],
  },
  {
    name: 'attacks',
    needs: 'the built runtime and time: floods on agent processes, the short soak',
    include: attacks,
    alone: true,
  },
  {
    name: 'processes',
    needs: 'the built packages: agents, the a2a CLI and the generator as processes',
    include: ['test/cli/**/*.test.ts', ...runtimeProcesses, ...generatorProcesses],
  },
  {
    name: 'projects',
    needs: 'the built packages and npm: generated projects installed and run',
    include: projectSuites,
  },
  {
    name: 'runtimes',
    needs: 'the built runtime and other runtimes (bun, deno, wrangler, node 20/22/24)',
    include: otherRuntimes,
  },
  { name: 'browser', needs: "the built runtime and Debian's Chromium", include: browser },
]
