import { REQUIREMENTS, type RequirementId } from './_requirements.js'
import type { Transport } from './_wire.js'

/** One check's outcome, as both reports give it. */
export interface CheckResult {
  id: RequirementId
  level: string
  transport: Transport | 'card'
  status: 'pass' | 'fail' | 'skip'
  /** What the check asks (the requirement's words, or the check's own when it tests one part of it). */
  what: string
  expected?: string
  actual?: string
  /** Why a check was skipped. */
  reason?: string
  durationMs: number
}

/** What a check found: nothing wrong, what was expected against what came, or why it could not run. */
export type Verdict = undefined | { expected: string; actual: string } | { skip: string }

export const fail = (expected: string, actual: string): Verdict => ({ expected, actual })

/** The results of a run, in the order the checks ran. */
export class Results {
  readonly all: CheckResult[] = []

  /** Runs one check and records its verdict (a check that throws is a failure that says so, never a crash). */
  async check(
    id: RequirementId,
    transport: Transport | 'card',
    run: () => Verdict | Promise<Verdict>,
    what: string = REQUIREMENTS[id].what,
  ): Promise<CheckResult> {
    const started = performance.now()
    let verdict: Verdict
    try {
      verdict = await run()
    } catch (error) {
      verdict = fail('the check to run', `it stopped: ${(error as Error).message}`)
    }
    const base = { id, level: REQUIREMENTS[id].level, transport, what }
    const durationMs = Math.round(performance.now() - started)
    const result: CheckResult =
      verdict === undefined
        ? { ...base, status: 'pass', durationMs }
        : 'skip' in verdict
          ? { ...base, status: 'skip', reason: verdict.skip, durationMs }
          : { ...base, status: 'fail', expected: verdict.expected, actual: verdict.actual, durationMs }
    this.all.push(result)
    return result
  }

  skip(id: RequirementId, transport: Transport | 'card', reason: string, what: string = REQUIREMENTS[id].what): void {
    this.all.push({ id, level: REQUIREMENTS[id].level, transport, what, status: 'skip', reason, durationMs: 0 })
  }
}
