import { scrub } from './cli.ts'

/** The report's closed vocabulary of statuses (COMPLIANCE.md A.2, without `withdrawn`: none is withdrawn yet). */
export type Status = 'pass' | 'partial' | 'fail' | 'not_measured' | 'na'

export interface Outcome {
  status: Status
  /** Why, for anything but a pass (and a pass's caveat, when it has one). */
  note: string | null
}

/**
 * What a check saw: each expectation it held the CLI to, met or not. A check passes only when it made at least one
 * observation and every one was met, so nothing passes by construction; each miss becomes the note, scrubbed of
 * what differs from run to run.
 */
export class Observations {
  private readonly misses: string[] = []
  private seen = 0

  /** Records one observation: `ok` when the CLI did `expected`; `actual` says what it did instead. */
  expect(ok: boolean, expected: string, actual?: string): boolean {
    this.seen++
    if (!ok) this.misses.push(actual === undefined ? expected : `${expected}; it did: ${scrub(actual)}`)
    return ok
  }

  get failed(): boolean {
    return this.misses.length > 0
  }

  /** The outcome of what was seen; `passNote` is kept on a pass (a caveat worth reading). */
  outcome(passNote: string | null = null): Outcome {
    if (this.seen === 0) return { status: 'not_measured', note: 'the check made no observation' }
    if (this.misses.length > 0) return { status: 'fail', note: `expected ${this.misses.join('; expected ')}` }
    return { status: 'pass', note: passNote }
  }
}
