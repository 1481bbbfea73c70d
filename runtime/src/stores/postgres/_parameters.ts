// Values as statement parameters where node-postgres's own encoding of an array would cost: it writes each element
// as a quoted, escaped string (two replaces and a copy of each), which PostgreSQL then parses back. For an echo send
// that was a fifth of what the agent allocated.

/**
 * Never raw in a text JSON.stringify made (it writes every control character as an escape, `\u001e`): JSON texts
 * joined by it go as one parameter, which the statement splits back (`string_to_array`).
 */
const JOIN_SEPARATOR = '\x1e'

/** `texts` (each from JSON.stringify) as one parameter: see JOIN_SEPARATOR. */
export const joinedJson = (texts: string[]): string => texts.join(JOIN_SEPARATOR)

/** Numbers as the array literal PostgreSQL reads (`{1,2,3}`). */
export const numberArray = (numbers: number[]): string => `{${numbers.join(',')}}`

/** Booleans as the array literal PostgreSQL reads (`{t,f}`). */
export const booleanArray = (values: boolean[]): string => `{${values.map((value) => (value ? 't' : 'f')).join(',')}}`
