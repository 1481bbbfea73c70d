import { describe, expect, it, vi } from 'vitest'
import { isoNow } from '../../runtime/src/core/_clock.ts'
import { newId } from '../../runtime/src/core/_ids.ts'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('task ids', () => {
  it('are version-4 UUIDs in the form crypto.randomUUID() gives', () => {
    for (let i = 0; i < 1000; i++) expect(newId()).toMatch(UUID_V4)
  })

  it('do not repeat across many refills of the random pool', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 100_000; i++) seen.add(newId())
    expect(seen.size).toBe(100_000)
  })

  it('use every hex digit in every free position (no stuck bits)', () => {
    const digits = Array.from({ length: 36 }, () => new Set<string>())
    for (let i = 0; i < 5000; i++) for (const [at, char] of [...newId()].entries()) digits[at]!.add(char)
    digits.forEach((set, at) => {
      if ([8, 13, 18, 23].includes(at)) expect([...set]).toEqual(['-'])
      else if (at === 14) expect([...set]).toEqual(['4'])
      else if (at === 19) expect([...set].sort()).toEqual(['8', '9', 'a', 'b'])
      else expect(set.size).toBe(16)
    })
  })
})

describe('timestamps', () => {
  it('are the current time as toISOString() writes it', () => {
    const before = Date.now()
    const stamp = isoNow()
    const after = Date.now()
    expect(stamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(Date.parse(stamp)).toBeGreaterThanOrEqual(before)
    expect(Date.parse(stamp)).toBeLessThanOrEqual(after)
  })

  it('move on as time passes', async () => {
    const first = isoNow()
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(Date.parse(isoNow())).toBeGreaterThan(Date.parse(first))
  })

  it('are exactly what toISOString() writes, for every millisecond of a second and across second, day and year ends', () => {
    const instants = [
      ...Array.from({ length: 1000 }, (_, ms) => Date.UTC(2026, 10, 26, 7, 30, 15, ms)),
      Date.UTC(2026, 11, 31, 23, 59, 59, 998),
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1, 0, 0, 0, 0),
      Date.UTC(2027, 0, 1, 0, 0, 0, 1),
      Date.UTC(2028, 1, 29, 12, 0, 0, 500),
      // Time going back (a clock set back) gives the earlier time, not a cached later one.
      Date.UTC(2026, 10, 26, 7, 30, 15, 0),
      Date.UTC(2026, 10, 26, 7, 30, 14, 999),
    ]
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      for (const instant of instants) {
        vi.setSystemTime(instant)
        expect(isoNow()).toBe(new Date(instant).toISOString())
      }
    } finally {
      vi.useRealTimers()
    }
  })
})
