import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { heapBytes, messageHeapBytes, stringHeapBytes } from '../../runtime/src/_heap-bytes.ts'
import type { Message } from '../../runtime/src/types.ts'
import { fixturePath } from './_fixture-process.ts'

/**
 * The budgets count what values cost on the heap. These tests hold the runtime's prices to what V8 really spends
 * on what `JSON.parse` builds (measured in a process of its own with --expose-gc), shape by shape: the shapes an
 * attacker would send, where JSON text is many times cheaper than the heap, must never be priced below their
 * heap; ordinary ones must not be priced far above it, or the budgets would refuse honest messages.
 */

const N = 20_000
const many = <T>(make: (i: number) => T): { a: T[] } => ({ a: Array.from({ length: N }, (_, i) => make(i)) })

/**
 * An object of the keys k0…k(n-1) in an order of its own (a seeded shuffle): each order is a hidden class of its own.
 */
function shuffledKeys(n: number, seed: number): Record<string, number> {
  const keys = Array.from({ length: n }, (_, i) => `k${i}`)
  let state = seed + 1
  for (let i = n - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2147483648
    const j = state % (i + 1)
    ;[keys[i], keys[j]] = [keys[j]!, keys[i]!]
  }
  return Object.fromEntries(keys.map((key) => [key, 0]))
}

/** Width amplification: tiny JSON text, much heap. */
const HOSTILE: Record<string, unknown> = {
  'empty objects': many(() => ({})),
  'empty arrays': many(() => []),
  'arrays of one zero': many(() => [0]),
  'arrays of an empty object': many(() => [{}]),
  'arrays of an empty array': many(() => [[]]),
  'objects of an empty object': many(() => ({ a: {} })),
  'objects each with a key of its own': many((i) => ({ [`x${i}`]: 0 })),
  'objects each with two keys of their own': many((i) => ({ [`x${i}`]: 0, [`y${i}`]: 0 })),
  'one object of many keys': Object.fromEntries(Array.from({ length: N }, (_, i) => [`k${i}`, 0])),
  'one object of many keys holding empty objects': Object.fromEntries(
    Array.from({ length: N }, (_, i) => [`k${i}`, {}]),
  ),
  'fractions among strings': many((i) => (i % 2 ? 1.5 : 'x')),
  'fractions in objects': many(() => ({ a: 1.5 })),
  'booleans in arrays': many(() => [true]),
  'empty strings': many(() => ''),
  'distinct short strings': many((i) => `q${i}`),
  'objects of the same sixteen keys in shuffled orders': {
    a: Array.from({ length: 2_000 }, (_, i) => shuffledKeys(16, i)),
  },
  'tiny text parts': { parts: Array.from({ length: N }, () => ({ kind: 'text', text: 'a' })) },
}

/** What honest clients send: text, records, a document. */
const ORDINARY: Record<string, unknown> = {
  'a long text': { text: 'lorem ipsum dolor sit amet '.repeat(40_000) },
  'a long text past Latin-1': { text: 'Grüße 😀 und 東京 '.repeat(40_000) },
  records: many((i) => ({
    name: `customer ${i}`,
    createdAt: '2026-01-01T00:00:00Z',
    id: i,
    ok: true,
    score: i / 7,
    tags: ['a', 'b'],
    note: null,
  })),
  'a table of numbers': many((i) => [i, i * 2.5, i % 3]),
  'text parts of sentences': {
    parts: Array.from({ length: N }, (_, i) => ({
      kind: 'text',
      text: `Sentence number ${i} of the answer, with some words.`,
    })),
  },
}

/** The Node this suite runs on, and the others the product is tested on (test-runtimes/), where installed. */
const NODES = [
  { name: `Node ${process.versions.node}`, path: process.execPath },
  ...['22', '24']
    .map((major) => ({
      name: `Node ${major}`,
      path: fileURLToPath(new URL(`../../test-runtimes/node_modules/node${major}/bin/node`, import.meta.url)),
    }))
    .filter((node) => existsSync(node.path)),
]

function measuredHeap(values: unknown[], node = process.execPath): number[] {
  const result = spawnSync(node, ['--expose-gc', fixturePath('parsed-heap.mjs')], {
    input: JSON.stringify(values.map((value) => JSON.stringify(value))),
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  })
  if (result.status !== 0) throw new Error(`parsed-heap.mjs failed: ${result.stderr}`)
  return JSON.parse(result.stdout) as number[]
}

describe('heap prices', () => {
  const priced = (value: unknown) => heapBytes(JSON.parse(JSON.stringify(value)))

  it.each(NODES)(
    'never price a hostile shape below the heap V8 gives it (and show how much JSON text understates it), on $name',
    ({ path: node }) => {
      const names = Object.keys(HOSTILE)
      // Each shape in a fresh process, as the prices are per value; then all in one process, one after another, as
      // a long-lived server meets them: V8's shared structures (hidden classes and their transitions) grow with
      // every shape kept alive, and the sum of the prices must cover that too.
      const alone = names.map((name) => measuredHeap([HOSTILE[name]], node)[0]!)
      const together = measuredHeap(Object.values(HOSTILE), node).reduce((sum, bytes) => sum + bytes, 0)
      const rows = names.map((name, i) => {
        const text = JSON.stringify(HOSTILE[name]).length
        return { name, text, heap: alone[i]!, price: priced(HOSTILE[name]) }
      })
      console.log(
        rows
          .map(
            (r) =>
              `${r.name}: JSON ${r.text} B, heap ${r.heap} B (${(r.heap / r.text).toFixed(1)}x), priced ${r.price} B (${(r.price / r.heap).toFixed(2)}x the heap)`,
          )
          .join('\n'),
      )
      for (const row of rows) {
        // A collection is not exact to the byte: 5% below the measured heap is noise, not an under-count.
        expect(row.price, row.name).toBeGreaterThanOrEqual(row.heap * 0.95)
        // …nor priced so far above that the budgets stop meaning memory.
        expect(row.price, row.name).toBeLessThan(row.heap * 4)
      }
      const priceTotal = rows.reduce((sum, row) => sum + row.price, 0)
      console.log(`all shapes in one process: heap ${together} B, priced ${priceTotal} B`)
      expect(priceTotal).toBeGreaterThanOrEqual(together)
      // The reason for all this: JSON text understates the worst of these twenty times over.
      expect(Math.max(...rows.map((r) => r.heap / r.text))).toBeGreaterThan(15)
    },
    // Eighteen processes, each collecting until its heap settles: ~3 s on an idle machine, many times that on a
    // loaded one.
    120_000,
  )

  it('price what honest clients send close to its heap', () => {
    const names = Object.keys(ORDINARY)
    const heap = measuredHeap(Object.values(ORDINARY))
    names.forEach((name, i) => {
      const price = priced(ORDINARY[name])
      expect(price, name).toBeGreaterThanOrEqual(heap[i]! * 0.95)
      expect(price, name).toBeLessThan(heap[i]! * 2)
    })
  })

  it('price a string by its characters: one byte each within Latin-1, two past it', () => {
    expect(stringHeapBytes('x'.repeat(1000))).toBe(1024)
    expect(stringHeapBytes('é'.repeat(1000))).toBe(1024)
    expect(stringHeapBytes(`${'x'.repeat(999)}€`)).toBe(2024)
    expect(stringHeapBytes('😀')).toBe(28)
    expect(stringHeapBytes('')).toBe(0)
    expect(stringHeapBytes('x')).toBe(0)
  })

  it('count a value JSON cannot write as endless, and what JSON leaves out as nothing', () => {
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    expect(heapBytes(cycle)).toBe(Number.POSITIVE_INFINITY)
    expect(heapBytes({ n: 10n })).toBe(Number.POSITIVE_INFINITY)
    expect(heapBytes({ f: () => 1, u: undefined })).toBe(heapBytes({ f: 0, u: 0 }))
  })

  // Each free-form object (here a data part and the metadata) is priced as a new shape once per message (V8 shares
  // the hidden classes of messages alike, which no count of one message can know): a few hundred bytes, which
  // small messages feel most.
  it('price small messages with metadata and a data part within three times their heap', () => {
    const messages: Message[] = Array.from({ length: 2_000 }, (_, i) => ({
      kind: 'message',
      messageId: `message-${i}-5b1f0c2e-7d3a-4a8e-9c61-2f0b8d4e7a13`,
      role: 'user',
      parts: [
        { kind: 'text', text: `Question ${i}: what is the weather in Lisbon tomorrow?` },
        { kind: 'data', data: { city: 'Lisbon', day: i } },
      ],
      contextId: `context-${i}-0d6e2f41-8b7c-4e3a-a5d9-1c2b3a4f5e6d`,
      metadata: { source: 'test' },
    }))
    const [heap] = measuredHeap([messages])
    const price = messages.reduce((sum, message) => sum + messageHeapBytes(message), 0)
    expect(price).toBeGreaterThanOrEqual(heap! * 0.95)
    expect(price).toBeLessThan(heap! * 3)
  })
})
