import { describe, expect, it } from 'vitest'
import { jsonBytes, messageBytes, textChunkBytes, textPartsBytes } from '../../runtime/src/_json-bytes.ts'
import { readSendParams } from '../../runtime/src/bindings/_platform-params.ts'
import { readSendParamsV1 } from '../../runtime/src/bindings/_v1-params.ts'
import type { Message } from '../../runtime/src/types.ts'

/**
 * maxTaskBytes counts each message and artifact by its JSON size without writing the JSON (the hot path measures
 * every message): the count must be the very number of bytes `JSON.stringify` would write, in UTF-8.
 */

const written = (value: unknown) => {
  const json = JSON.stringify(value)
  return json === undefined ? 0 : Buffer.byteLength(json)
}

const CHARACTERS = [
  'a',
  '"',
  '\\',
  '\n',
  '\t',
  '\b',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0080',
  'é',
  '\u07ff',
  '\u0800',
  '€',
  '\u2028',
  '😀',
  '\ud800',
  '\udc00',
  ' ',
]

describe('jsonBytes', () => {
  it('counts what JSON.stringify writes, in UTF-8: escapes, multi-byte and lone surrogates, numbers, left-out values, toJSON, long strings', () => {
    const values: unknown[] = [
      '',
      CHARACTERS.join(''),
      // Each character alone, and long strings of each (measured another way past 128 characters).
      ...CHARACTERS,
      ...CHARACTERS.map((character) => character.repeat(200)),
      // Past 24 characters an id-like string is first scanned for plain ASCII: each character at its end, and alone.
      ...CHARACTERS.map((character) => `${'x'.repeat(36)}${character}`),
      ...CHARACTERS.map((character) => character.repeat(30)),
      'x'.repeat(23),
      'x'.repeat(24),
      'x'.repeat(128),
      `${'😀'.repeat(64)}\ud83d`,
      0,
      -0,
      1.5,
      -3e-7,
      1e21,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      true,
      false,
      null,
      [],
      {},
      [undefined, () => 1, Symbol('s'), 1],
      { a: undefined, b: () => 1, c: Symbol('s') },
      { a: undefined, b: 1 },
      { date: new Date(0), nested: { list: [1, 'two', { three: [null] }] } },
      Object.assign(Object.create(null), { bare: 'prototype' }),
      { toJSON: () => ({ replaced: true }) },
      {
        kind: 'message',
        role: 'user',
        messageId: 'm-1',
        parts: [
          { kind: 'text', text: 'hello "world"\n' },
          { kind: 'data', data: { é: [1, 2, { x: '€' }] } },
        ],
      },
      // The keys of the data model are counted as constants, whatever their values.
      {
        kind: 'é',
        text: '"',
        role: 1,
        data: null,
        file: { name: '\n', mimeType: '€', bytes: 'a'.repeat(24) },
        name: undefined,
        parts: [],
        taskId: '😀'.repeat(20),
        metadata: { kind: { kind: 'kind' } },
        messageId: '\ud800'.repeat(13),
        mediaType: 'é"',
        contextId: -0,
        lastChunk: false,
        artifactId: { toJSON: () => 'replaced' },
        Kind: 'a key like one of them, but not one',
      },
    ]
    for (const value of values) expect(jsonBytes(value), JSON.stringify(value)).toBe(written(value))
  })

  it('counts a text artifact the runtime builds from a string as a walk over it would, without one', () => {
    const texts = ['', 'Echo: hi', ...CHARACTERS, CHARACTERS.join(''), 'x'.repeat(40), 'é'.repeat(300)]
    for (const text of texts) {
      expect(textPartsBytes(text), JSON.stringify(text)).toBe(written([{ kind: 'text', text }]))
      for (const lastChunk of [true, false]) {
        for (const artifactId of ['4f6c3c1e-2b1a-4d7e-9a55-1c2d3e4f5a6b', 'my "id"', '']) {
          expect(textChunkBytes(artifactId, text, lastChunk), JSON.stringify(text)).toBe(written({ artifactId, parts: [{ kind: 'text', text }], lastChunk }))
        }
      }
    }
  })

  it('counts a value JSON cannot hold as endless (no task can take it)', () => {
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    expect(jsonBytes(cycle)).toBe(Number.POSITIVE_INFINITY)
    expect(jsonBytes({ big: 1n })).toBe(Number.POSITIVE_INFINITY)
  })

  it('counts a message field by field as a walk over it would, for every optional field and kind of part', () => {
    const texts = ['', 'hi', CHARACTERS.join(''), 'x'.repeat(40), 'é'.repeat(300)]
    const metadatas = [undefined, {}, { trace: 'é"', n: [1, null, { deep: true }] }]
    for (const text of texts) {
      for (const metadata of metadatas) {
        const parts: Message['parts'] = [
          { kind: 'text', text },
          { kind: 'data', data: { text, list: [1, 2] } },
          { kind: 'file', file: { name: text, uri: 'https://example.org/f' } },
        ]
        const message: Message = { kind: 'message', messageId: text || 'm-1', role: 'user', parts }
        const variants: Message[] = [
          message,
          { ...message, parts: [{ kind: 'text', text, ...(metadata && { metadata }) }] },
          // A2A v1.0 parts: a media type on text and data, data that is not an object.
          {
            ...message,
            parts: [
              { kind: 'text', text, mediaType: `text/${text}`, ...(metadata && { metadata }) },
              { kind: 'text', text, mediaType: 'text/markdown' },
            ],
          },
          {
            ...message,
            parts: [
              { kind: 'data', data: [text, 1, null], mediaType: 'application/json' },
              { kind: 'data', data: text },
              { kind: 'data', data: null },
              { kind: 'data', data: -1.5 },
            ],
          },
          { ...message, parts: [] },
          { ...message, role: 'agent', contextId: `ctx-${text}`, taskId: '4f6c3c1e-2b1a-4d7e-9a55-1c2d3e4f5a6b', ...(metadata && { metadata }) },
          { ...message, contextId: undefined, taskId: undefined, metadata: undefined },
        ]
        for (const variant of variants) expect(messageBytes(variant), JSON.stringify(variant)).toBe(written(variant))
      }
    }
  })

  it('counts exactly the user messages both bindings build from the wire, whatever else the client sent', () => {
    const extra = { extensions: ['x'], referenceTaskIds: ['t'], unknown: { a: 1 } }
    const platform = readSendParams(
      {
        message: {
          ...extra,
          role: 'user',
          messageId: 'm-"1"',
          contextId: 'c',
          parts: [
            { kind: 'text', text: 'é\n', extra: 1, metadata: { k: 'v' } },
            { kind: 'data', data: { a: [1] } },
            { kind: 'file', file: { uri: 'https://example.org', name: 'n', other: 2 } },
          ],
          metadata: { m: 1 },
        },
      },
      'platform',
    ).message
    const v1 = readSendParamsV1({
      message: {
        ...extra,
        role: 'ROLE_USER',
        messageId: 'm-2',
        taskId: 't-1',
        parts: [
          { text: 'hello', extra: true },
          { data: { b: 2 } },
          { url: 'https://example.org/x', mediaType: 'text/plain', filename: 'x.txt' },
          { raw: 'aGk=' },
        ],
      },
    }).message
    const v1Values = readSendParamsV1({
      message: {
        role: 'ROLE_USER',
        message_id: 'm-4',
        context_id: 'c-"4"',
        parts: [
          { text: '# é', mediaType: 'text/markdown', filename: 'ignored.md' },
          { text: 'x', media_type: 'text/x-é', metadata: { a: 1 } },
          { data: [1, 'two'], mediaType: 'application/json' },
          { data: 'a string' },
          { data: null },
          { data: 7 },
          { data: false },
        ],
      },
    }).message
    const v1InV03Shape = readSendParamsV1({
      message: { ...extra, role: 'ROLE_USER', messageId: 'm-3', parts: [{ kind: 'text', text: 'old shape', extra: 1 }] },
    }).message
    for (const message of [platform, v1, v1Values, v1InV03Shape]) expect(messageBytes(message), JSON.stringify(message)).toBe(written(message))
  })
})
