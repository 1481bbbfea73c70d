// What an agent sends is printed as text a terminal only shows: never a control sequence it would obey.

// C0 controls but tab and newline, DEL, and C1 (which some terminals read as escape sequences on their own).
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what it removes
const CONTROLS_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what it removes
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g
// Unicode's own line breaks and the bidirectional overrides that reorder what a terminal shows.
const INVISIBLE_LAYOUT = /[\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/** Multi-line text as printable text: line ends kept (CRLF and CR as LF), tabs kept, every other control gone. */
export function printableText(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(CONTROLS_BUT_LAYOUT, '').replace(INVISIBLE_LAYOUT, '')
}

/** A value for one `Label: value` line: line breaks and tabs become spaces, every other control is dropped. */
export function printableLine(value: string): string {
  return value
    .replace(/[\r\n\t\u2028\u2029]+/g, ' ')
    .replace(CONTROLS, '')
    .replace(INVISIBLE_LAYOUT, '')
}

/** `word` as one POSIX shell word: as is when it holds only characters no shell treats specially. */
export function shellWord(word: string): string {
  if (/^[\w@%+=:,./-]+$/.test(word)) return word
  return `'${word.replaceAll("'", `'\\''`)}'`
}
