/**
 * Escaping for every context a user string can reach in a generated file. Templates never print a user
 * string directly: the render context wraps them (see `render.ts`) so only these helpers can unwrap them.
 */

/** A JSON value (and so a valid TypeScript/JavaScript expression). */
export function json(value: unknown): string {
  return JSON.stringify(value)
}

/** A TypeScript string literal. JSON strings are valid ECMAScript literals; `<` is escaped so a
 *  `</script>` in the data never ends an inline script if the file is ever embedded in HTML. */
export function tsString(value: string): string {
  return JSON.stringify(value).replace(/</g, '\\u003c')
}

/** Markup characters, escaped wherever they are; `<` opens HTML and autolinks. */
const MARKDOWN_SPECIAL = /[\\`*_{}[\]()#+\-.!|~<]/g
/** An `&` that would start an entity reference (`&copy;`, `&#42;`, `&#x2A;`). */
const MARKDOWN_ENTITY = /&(?=#?[A-Za-z0-9]+;)/g

/**
 * Inline Markdown text on one line that reads as typed, raw or rendered: markup characters backslash-escaped
 * (a `\<` never opens an HTML tag or autolink, a `\&` never an entity), newlines folded. A `&` or `"` that
 * starts nothing stays as it is, and so does a `>` but at the start, where it would open a block quote.
 */
export function markdown(value: string): string {
  return value
    .replace(/\r\n?|\n/g, ' ')
    .replace(MARKDOWN_SPECIAL, '\\$&')
    .replace(MARKDOWN_ENTITY, '\\&')
    .replace(/^(\s*)>/, '$1\\>')
}

/**
 * A value on a `.env` line, unquoted: the readers of .env (Node, Bun, Deno, wrangler's dotenv) agree on it only
 * without spaces, quotes, backslashes, `#` (a comment) and `$` (expanded by some). The answers written there are
 * checked to have none (`options.ts`); this refuses one that slipped through rather than write a different value.
 */
export function dotenvValue(value: string): string {
  if (/[\s"'`$\\#]/.test(value)) throw new Error(`${JSON.stringify(value)} cannot be written to .env unquoted`)
  return value
}

/** One shell word, for the equivalent command printed after an interactive run (POSIX shells). */
export function shellWord(value: string): string {
  if (/^[A-Za-z0-9_./:=@%+,-]+$/.test(value)) return value
  return `'${value.replace(/'/g, `'\\''`)}'`
}
