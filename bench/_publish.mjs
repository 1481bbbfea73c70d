// What every bench command does at its end: the report and its raw numbers written side by side, and the
// process's exit code from the problems the run found.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** `2026-11-25-0057`: when the run ended, in the machine's time, for the report's file name. */
export function stamp(date) {
  const p = (n) => String(n).padStart(2, '0')
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())}-${p(date.getHours())}${p(date.getMinutes())}`
}

/**
 * Writes `<dir>/<name>.md` (the report) and `<name>.json` (the raw numbers), prints the report and where they
 * are; answers the exit code: 1 when the run found problems.
 */
export function publishReport(dir, name, report, results) {
  mkdirSync(dir, { recursive: true })
  const base = join(dir, name)
  writeFileSync(`${base}.md`, report)
  writeFileSync(`${base}.json`, `${JSON.stringify(results, null, 2)}\n`)
  process.stdout.write(report)
  process.stdout.write(`\nReport: ${base}.md\nRaw numbers: ${base}.json\n`)
  return results.problems.length ? 1 : 0
}

/** Runs `main` and exits with its code (1 when it throws), after `cleanup` whatever happened. */
export async function runAndExit(main, cleanup, log) {
  let code = 1
  try {
    code = await main()
  } catch (error) {
    log(`failed: ${error.stack ?? error}`)
  } finally {
    await cleanup()
  }
  process.exit(code)
}
