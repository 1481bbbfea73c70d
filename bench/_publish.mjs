// What every bench command does around its run: its clean-ups (on its end or on a signal), the report and its
// raw numbers written side by side, and the process's exit code from the problems the run found.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { killAll } from './_processes.mjs'

/**
 * The run's clean-ups (`add` them as they are needed: temporary files, servers), done by `cleanup` after killing
 * every child. The children run in their own process groups (so a terminal's Ctrl-C reaches only the bench): a
 * SIGINT or SIGTERM ends them here; kept on for repeated signals, so a second Ctrl-C cannot kill the bench before
 * its children.
 */
export function runCleanups(log) {
  const pending = []
  const cleanup = async () => {
    killAll('SIGKILL')
    while (pending.length) {
      try {
        await pending.pop()()
      } catch {}
    }
  }
  let stopping = false
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      if (stopping) return
      stopping = true
      log(`${signal}: stopping its servers and load generators`)
      cleanup().finally(() => process.exit(130))
    })
  }
  process.once('exit', () => killAll('SIGKILL'))
  return { add: (work) => pending.push(work), cleanup }
}

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
