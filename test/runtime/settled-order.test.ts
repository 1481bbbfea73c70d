import { describe, expect, it } from 'vitest'
import { SettledOrder } from '../../runtime/src/stores/_settled-order.ts'

interface Entry {
  name: number
  place: number
}

const entry = (name: number): Entry => ({ name, place: -1 })
const names = (entries: Entry[]): number[] => entries.map((e) => e.name)

describe('the order in which tasks settled (memory store retention)', () => {
  it('puts a task that settles again at the end, forgets one removed, and walks from the oldest', () => {
    const order = new SettledOrder<Entry>()
    const [a, b, c] = [entry(1), entry(2), entry(3)]
    order.push(a)
    order.push(b)
    order.push(c)
    order.push(a)
    expect(order.first()).toBe(b)
    expect(order.size).toBe(3)
    order.remove(b)
    order.remove(b)
    expect(order.size).toBe(2)
    expect(order.first()).toBe(c)
    expect(names(order.entries())).toEqual([3, 1])
    order.remove(c)
    order.remove(a)
    expect(order.first()).toBeUndefined()
    expect(order.size).toBe(0)
    order.push(b)
    expect(order.first()).toBe(b)
  })

  // Long conversations re-settle the same tasks again and again, a flood settles and evicts: the array is cut
  // down and rebuilt under both, and must still agree with a plain list at every step.
  it('agrees with a plain list through 30,000 turns of ten conversations, then 100,000 random settles, removals and evictions from the front', () => {
    const order = new SettledOrder<Entry>()
    const model: Entry[] = []
    const pool = Array.from({ length: 3000 }, (_, i) => entry(i))
    let seed = 42
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    // A few conversations settling turn after turn, nothing dropped: stale places pile up and are rebuilt away.
    for (let turn = 0; turn < 30_000; turn++) {
      const picked = pool[turn % 10]!
      const at = model.indexOf(picked)
      if (at >= 0) model.splice(at, 1)
      model.push(picked)
      order.push(picked)
      // Looked at without walking it (a walk drops stale places from the front as it goes).
      expect(names(order.entries())).toEqual(names(model))
    }
    expect(order.first()).toBe(model[0])
    for (let step = 0; step < 100_000; step++) {
      const roll = random(100)
      const picked = pool[random(roll < 60 ? 20 : pool.length)]!
      const at = model.indexOf(picked)
      if (roll < 80) {
        if (at >= 0) model.splice(at, 1)
        model.push(picked)
        order.push(picked)
      } else if (roll < 90) {
        if (at >= 0) model.splice(at, 1)
        order.remove(picked)
      } else {
        const oldest = order.first()
        expect(oldest).toBe(model[0])
        if (oldest) {
          order.remove(oldest)
          model.shift()
        }
      }
      expect(order.size).toBe(model.length)
      if (step % 5000 === 0) expect(names(order.entries())).toEqual(names(model))
    }
    expect(names(order.entries())).toEqual(names(model))
  })
})
