import { resolve } from 'node:path'

/**
 * The two builds an A/B compares, from the command line: A as given, B as given or this checkout's runtime/dist.
 * Without A, prints `usage` and exits 2.
 */
export function buildsToCompare(positionals, usage) {
  if (positionals.length < 1) {
    console.error(usage)
    process.exit(2)
  }
  return {
    A: resolve(positionals[0]),
    B: resolve(positionals[1] ?? new URL('../runtime/dist/index.js', import.meta.url).pathname),
  }
}
