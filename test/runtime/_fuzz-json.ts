/**
 * The JSON text side of the fuzz: a seeded PRNG, a model of a request that holds what JSON.parse can give
 * but an object literal cannot (own `__proto__` keys, duplicated keys, numbers such as 1e999, nesting too
 * deep to build), the serialiser that writes it, and damage done to the bytes afterwards.
 */

/** Bytes in an ArrayBuffer (not a SharedArrayBuffer), as fetch takes them for a body. */
export type Bytes = Uint8Array<ArrayBuffer>

// --- PRNG ------------------------------------------------------------------------------------------------

export interface Rng {
  next(): number
  int(below: number): number
  pick<T>(items: readonly T[]): T
  chance(probability: number): boolean
}

/** mulberry32: tiny, fast, and good enough to pick mutations. */
export function createRng(seed: number): Rng {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (below: number) => Math.floor(next() * below)
  return { next, int, pick: (items) => items[int(items.length)]!, chance: (probability) => next() < probability }
}

// --- The JSON model --------------------------------------------------------------------------------------

export type JsonType = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object'
export type Json = Record<string, unknown>
export type Path = Array<string | number>

/** JSON text written as it is: numbers `JSON.stringify` cannot write (1e999, -0) and very deep nesting. */
export class Raw {
  constructor(
    readonly text: string,
    readonly type: JsonType,
  ) {}
}

export const isContainer = (value: unknown): value is Json | unknown[] =>
  typeof value === 'object' && value !== null && !(value instanceof Raw)
export const isObject = (value: unknown): value is Json => isContainer(value) && !Array.isArray(value)

/**
 * Sets an own property, `__proto__` included: an assignment to `__proto__` would change the prototype
 * instead of adding the key JSON.parse gives the server.
 */
export function put(target: Json | unknown[], key: string | number, value: unknown): void {
  if (Array.isArray(target)) target[Number(key)] = value
  else Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/** An object from entries, each an own property (see `put`). */
export function obj(entries: Array<[string, unknown]>): Json {
  const out: Json = {}
  for (const [key, value] of entries) put(out, key, value)
  return out
}

export const own = (value: unknown, key: string | number): boolean => isContainer(value) && Object.hasOwn(value, key)

export function getAt(root: unknown, path: Path): unknown {
  let node = root
  for (const key of path) {
    if (!own(node, key)) return undefined
    node = (node as Json)[key as string]
  }
  return node
}

export function setAt(root: Json, path: Path, value: unknown): boolean {
  const parent = getAt(root, path.slice(0, -1))
  if (!isContainer(parent)) return false
  put(parent, path.at(-1)!, value)
  return true
}

export function deleteAt(root: Json, path: Path): void {
  const parent = getAt(root, path.slice(0, -1))
  const key = path.at(-1)!
  if (Array.isArray(parent)) parent.splice(Number(key), 1)
  else if (isObject(parent)) delete parent[key as string]
}

/** Every path into the request (not into Raw text), the envelope fields included. */
export function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (!isContainer(value)) return out
  const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value)
  for (const key of keys) {
    const path = [...prefix, key]
    out.push(path)
    // Wide arrays (1000 parts) would make the path list huge; their first elements stand for the rest.
    if (typeof key === 'number' && key > 3) continue
    pathsOf((value as Json)[key as string], path, out)
  }
  return out
}

export const showPath = (path: Path) =>
  path
    .map((key) => (typeof key === 'number' ? `[${key}]` : `.${key.length > 20 ? `${key.slice(0, 20)}…` : key}`))
    .join('')
    .replace(/^\./, '') || '<root>'

/** Decoys: values written before the real one under the same key, so the raw text has duplicated keys. */
const decoys = new WeakMap<object, Map<string, unknown[]>>()

export function addDecoy(target: Json, key: string, value: unknown): void {
  let byKey = decoys.get(target)
  if (!byKey) {
    byKey = new Map()
    decoys.set(target, byKey)
  }
  byKey.set(key, [...(byKey.get(key) ?? []), value])
}

export interface Style {
  rng: Rng
  /** Chance of writing a key with `\uXXXX` escapes (the same key once parsed). */
  escapeKeys: number
  /** JSON whitespace between tokens. */
  spaced: boolean
}

function writeKey(key: string, style: Style): string {
  if (!style.rng.chance(style.escapeKeys) || key.length > 100) return JSON.stringify(key)
  return `"${[...key].map((char) => (char.length === 1 && style.rng.chance(0.5) ? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}` : JSON.stringify(char).slice(1, -1))).join('')}"`
}

/** Serialises the model: Raw as it is, decoys before the real entry (the last duplicate wins in JSON.parse). */
export function write(value: unknown, style: Style): string {
  if (value instanceof Raw) return value.text
  if (value === undefined) return 'null'
  if (!isContainer(value)) return JSON.stringify(value)
  const gap = style.spaced ? style.rng.pick([' ', '\n', '\t', '\r\n  ']) : ''
  if (Array.isArray(value)) return `[${gap}${value.map((item) => write(item, style)).join(`,${gap}`)}${gap}]`
  const byKey = decoys.get(value)
  const entries: string[] = []
  for (const key of Object.keys(value)) {
    if (value[key] === undefined) continue
    for (const decoy of byKey?.get(key) ?? []) entries.push(`${writeKey(key, style)}:${gap}${write(decoy, style)}`)
    entries.push(`${writeKey(key, style)}:${gap}${write(value[key], style)}`)
  }
  return `{${gap}${entries.join(`,${gap}`)}${gap}}`
}

/** A short description of a value for labels. */
export const show = (value: unknown): string => {
  const text = value instanceof Raw ? value.text : (JSON.stringify(value) ?? 'undefined')
  return text.length > 40 ? `${text.slice(0, 30)}… (${text.length} chars)` : text
}

// --- Raw bytes -----------------------------------------------------------------------------------------

export const encoder = new TextEncoder()

const INVALID_UTF8: Array<[string, number[]]> = [
  ['0xFF', [0xff]],
  ['0xFE', [0xfe]],
  ['overlong NUL', [0xc0, 0x80]],
  ['overlong "/"', [0xc1, 0xaf]],
  ['lone high surrogate', [0xed, 0xa0, 0x80]],
  ['lone low surrogate', [0xed, 0xbf, 0xbf]],
  ['CESU-8 pair', [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]],
  ['past U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ['5-byte form', [0xf8, 0x88, 0x80, 0x80, 0x80]],
  ['lone continuation', [0x80]],
  ['truncated 3-byte', [0xe2, 0x82]],
  ['truncated 4-byte', [0xf0, 0x9f, 0x98]],
]

export const concat = (...pieces: Bytes[]): Bytes => {
  const out = new Uint8Array(pieces.reduce((size, piece) => size + piece.byteLength, 0))
  let offset = 0
  for (const piece of pieces) {
    out.set(piece, offset)
    offset += piece.byteLength
  }
  return out
}

/**
 * One change to the bytes. `careful` keeps to changes that either break the whole text or leave its meaning
 * alone: bytes dropped into the middle could corrupt a key and so unbreak a broken field.
 */
export function rawMutation(rng: Rng, bytes: Bytes, careful: boolean): { bytes: Bytes; label: string } {
  const text = new TextDecoder().decode(bytes)
  const choices: Array<() => { bytes: Bytes; label: string }> = [
    () => {
      const at = 1 + rng.int(Math.max(1, bytes.byteLength - 1))
      return { bytes: bytes.slice(0, at), label: `truncated at ${at}/${bytes.byteLength}` }
    },
    () => ({ bytes: concat(new Uint8Array([0xef, 0xbb, 0xbf]), bytes), label: 'UTF-8 BOM first' }),
    () => ({
      bytes: concat(encoder.encode(' \n\t\r '), bytes, encoder.encode('\n\r\t ')),
      label: 'JSON whitespace around',
    }),
    () => {
      const space = rng.pick(['\u00a0', '\u000b', '\u000c', '\u2028', '\u0000'])
      return { bytes: concat(encoder.encode(space), bytes), label: `${JSON.stringify(space)} first` }
    },
    () => {
      const tail = rng.pick([',', '}', ']', 'x', '\u0000', '/* c */', text])
      return { bytes: concat(bytes, encoder.encode(tail)), label: `${JSON.stringify(tail.slice(0, 10))} after the end` }
    },
    () => ({ bytes: concat(encoder.encode('// comment\n'), bytes), label: 'a comment first' }),
    () => {
      // UTF-16LE with its BOM: what a Windows tool might send.
      const out = new Uint8Array(2 + text.length * 2)
      out.set([0xff, 0xfe])
      for (let i = 0; i < text.length; i++) {
        out[2 + i * 2] = text.charCodeAt(i) & 0xff
        out[3 + i * 2] = text.charCodeAt(i) >> 8
      }
      return { bytes: out, label: 'UTF-16LE' }
    },
  ]
  const risky: Array<() => { bytes: Bytes; label: string }> = [
    () => {
      const [name, sequence] = rng.pick(INVALID_UTF8)
      // Right after a quote: often inside a string (a key or a value), sometimes between tokens.
      const quotes = [...bytes.keys()].filter((i) => bytes[i] === 0x22)
      const at = quotes.length && rng.chance(0.8) ? rng.pick(quotes) + 1 : rng.int(bytes.byteLength + 1)
      return { bytes: concat(bytes.slice(0, at), new Uint8Array(sequence), bytes.slice(at)), label: `${name} at ${at}` }
    },
    () => {
      // Latin-1 instead of UTF-8: every non-ASCII character becomes invalid UTF-8.
      const out = new Uint8Array(text.length)
      for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0xff
      return { bytes: out, label: 'Latin-1 encoded' }
    },
  ]
  return rng.pick(careful ? choices : [...choices, ...risky, ...risky])()
}
