import { printableLine, printableText } from './_sanitize.js'

/** What every line of a block's content starts with, so no line of an agent's text reads as a field or as its end. */
const INDENT = '  '

/**
 * The `text` format's two shapes, and nothing else reaches stdout:
 * - a field: one `Label: value` line (the value on one line, controls removed);
 * - a block: a `Label:` line (a value may follow), its content with every line indented by two spaces (an empty
 *   line of content too), then one empty line. The empty line is the only one a block holds, so a reader skips
 *   a block whole (`sed '/^Artifact:/,/^$/d'`), and an agent's text can never pose as a field.
 * A block stays open while more of its content streams in (`openBlock` … `append` …); a field or another block
 * closes it first, so a block is never interleaved with fields.
 */
export interface TextWriter {
  field(label: string, value: string | number): void
  /** A whole block. */
  block(label: string, value: string | undefined, content: string): void
  /** Opens a block that `append` fills; `key` names what it shows (an artifact id) so a stream can continue it. */
  openBlock(label: string, value: string | undefined, key?: string): void
  /** The key of the open block, if one is open. */
  readonly openKey: string | undefined
  /** Adds content to the open block. */
  append(content: string): void
  /** Ends the content's current line (when one is open), so what is appended next starts a line. */
  endLine(): void
  /** Closes the open block (if any). */
  closeBlock(): void
  /** Separates one record from the next (a task of a list) with an empty line, unless one was just written. */
  separate(): void
}

export function createTextWriter(write: (text: string) => void): TextWriter {
  let open = false
  let key: string | undefined
  let atLineStart = true
  // The last line written was empty (a block's end, a separator): nothing written at all counts as one.
  let afterEmptyLine = true

  const closeBlock = () => {
    if (!open) return
    write(atLineStart ? '\n' : '\n\n')
    open = false
    key = undefined
    atLineStart = true
    afterEmptyLine = true
  }
  const labelLine = (label: string, value: string | number | undefined) => {
    const shown = value === undefined || value === '' ? '' : ` ${printableLine(String(value))}`
    write(`${label}:${shown}\n`)
    afterEmptyLine = false
  }
  const append = (content: string) => {
    if (!open) throw new Error('append() needs an open block')
    const lines = printableText(content).split('\n')
    let out = ''
    lines.forEach((line, index) => {
      if (index > 0) {
        out += atLineStart ? `${INDENT}\n` : '\n'
        atLineStart = true
      }
      if (line) {
        out += atLineStart ? INDENT + line : line
        atLineStart = false
      }
    })
    if (out) write(out)
  }
  const openBlock = (label: string, value: string | undefined, blockKey?: string) => {
    closeBlock()
    labelLine(label, value)
    open = true
    key = blockKey
    atLineStart = true
  }

  return {
    field(label, value) {
      closeBlock()
      labelLine(label, value)
    },
    block(label, value, content) {
      openBlock(label, value)
      append(content)
      closeBlock()
    },
    openBlock,
    get openKey() {
      return open ? key : undefined
    },
    append,
    endLine() {
      if (!open || atLineStart) return
      write('\n')
      atLineStart = true
    },
    closeBlock,
    separate() {
      closeBlock()
      if (afterEmptyLine) return
      write('\n')
      afterEmptyLine = true
    },
  }
}
