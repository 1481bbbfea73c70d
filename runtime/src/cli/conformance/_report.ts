import { counts, type Level } from './_requirements.js'
import type { CheckResult } from './_results.js'
import type { RunReport } from './_run.js'

/** The checks that count at the level asked for, and their totals. */
export function tally(report: RunReport, level: Level) {
  const checks = report.results.filter((result) => counts(result.level as Level, level))
  const count = (status: CheckResult['status']) => checks.filter((result) => result.status === status).length
  return { checks, totals: { passed: count('pass'), failed: count('fail'), skipped: count('skip') } }
}

/** `-o json`: one document. */
export function jsonReport(report: RunReport, agent: string, level: Level): string {
  const { checks, totals } = tally(report, level)
  return `${JSON.stringify({
    agent,
    card: report.card,
    level: level.toLowerCase(),
    transports: report.transports,
    checks: checks.map(({ id, level, transport, status, what, expected, actual, reason, durationMs }) => ({
      id,
      level,
      transport,
      status,
      what,
      ...(expected !== undefined && { expected }),
      ...(actual !== undefined && { actual }),
      ...(reason !== undefined && { reason }),
      durationMs,
    })),
    totals,
  })}\n`
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what it removes
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g
/** The agent's words on one line, never a control sequence for the terminal. */
const clean = (text: string) => text.replace(CONTROL, ' ')

/** Text: the agent and transports, a line per check, the totals, then each failure's expected and actual. */
export function textReport(report: RunReport, agent: string, level: Level): string {
  const { checks, totals } = tally(report, level)
  const lines = [`Agent: ${agent}`, `Card: ${report.card}`, `Level: ${level.toLowerCase()}`]
  for (const entry of report.transports)
    lines.push(
      `Transport: ${entry.transport} ${entry.run ? entry.url : `not run (${entry.url ? `${entry.url}: ` : ''}${entry.reason})`}`,
    )
  lines.push('')
  const idWidth = Math.max(...checks.map((check) => check.id.length), 0)
  for (const check of checks) {
    const status = check.status === 'pass' ? 'PASS' : check.status === 'fail' ? 'FAIL' : 'SKIP'
    const why = check.reason ? ` (${clean(check.reason)})` : ''
    lines.push(
      `${status}  ${check.id.padEnd(idWidth)}  ${check.level.padEnd(6)}  ${check.transport.padEnd(9)}  ${check.what}${why}`,
    )
  }
  lines.push('', `Summary: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`)
  const failures = checks.filter((check) => check.status === 'fail')
  if (failures.length > 0) {
    lines.push('', 'Failures:')
    for (const failure of failures)
      lines.push(
        '',
        `${failure.id} (${failure.level}, ${failure.transport}): ${failure.what}`,
        `  Expected: ${clean(failure.expected ?? '')}`,
        `  Actual: ${clean(failure.actual ?? '')}`,
      )
  }
  return `${lines.join('\n')}\n`
}
