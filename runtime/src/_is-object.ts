/**
 * A JSON object as parsed: not null and not an array, which are also `typeof 'object'`. The one check every reader
 * of untrusted JSON (wire params, cards, store lines, CLI answers) starts from.
 */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
