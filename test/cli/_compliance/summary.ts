import type { Outcome, Status } from './outcome.ts'
import { type DefaultKey, REQUIREMENTS } from './requirements.ts'

/** The per-tier rollup, by COMPLIANCE.md's fail-closed rules (its Appendix A.3). */

export interface TierSummary {
  total: number
  pass: number
  partial: number
  fail: number
  not_measured: number
  na: number
  satisfied: boolean
}

export interface DefaultRow {
  shipped: boolean
  overridable: boolean
  note: string | null
}

const KNOWN: ReadonlySet<string> = new Set<Status>(['pass', 'partial', 'fail', 'not_measured', 'na'])

/**
 * Each tier's counts and whether it is satisfied: every one of its requirements present with `pass` or `na`, and
 * DEFAULT_001 a pass only with every breakdown row shipped and overridable. A missing requirement or an unknown
 * status never satisfies (an unknown one counts as not measured).
 */
export function summarize(
  outcomes: ReadonlyMap<string, Outcome>,
  breakdown: Partial<Record<DefaultKey, DefaultRow>>,
  defaultKeys: readonly DefaultKey[],
): Record<1 | 2 | 3, TierSummary> {
  const summary = {} as Record<1 | 2 | 3, TierSummary>
  for (const level of [1, 2, 3] as const) {
    const ids = REQUIREMENTS.filter((requirement) => requirement.tier === level).map((requirement) => requirement.id)
    const row: TierSummary = {
      total: ids.length,
      pass: 0,
      partial: 0,
      fail: 0,
      not_measured: 0,
      na: 0,
      satisfied: true,
    }
    for (const id of ids) {
      const outcome = outcomes.get(id)
      const status = outcome && KNOWN.has(outcome.status) ? outcome.status : 'not_measured'
      row[status]++
      if (status !== 'pass' && status !== 'na') row.satisfied = false
    }
    summary[level] = row
  }
  const defaults = outcomes.get('A2ACLI_DEFAULT_001')
  const wholeBreakdown = defaultKeys.every((key) => breakdown[key]?.shipped && breakdown[key]?.overridable)
  if (defaults?.status === 'pass' && !wholeBreakdown) summary[1].satisfied = false
  // Tiers are cumulative: a tier counts as satisfied only on top of the ones below it.
  summary[2].satisfied &&= summary[1].satisfied
  summary[3].satisfied &&= summary[2].satisfied
  return summary
}

/** The highest tier satisfied (0: none). */
export const tierClaimed = (summary: Record<1 | 2 | 3, TierSummary>): 0 | 1 | 2 | 3 =>
  summary[3].satisfied ? 3 : summary[2].satisfied ? 2 : summary[1].satisfied ? 1 : 0
