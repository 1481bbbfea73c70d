import { createRequire } from 'node:module'

/**
 * The text prompt of `prompts` counts its cursor in UTF-16 code units but moves it one unit a character: after an
 * emoji (two units, a surrogate pair) the next key lands between its halves, and Backspace or an arrow splits one.
 * The halves alone are no characters: the answer reached the file system as U+FFFD. These methods take whole code
 * points; the rest of the prompt is left as it is.
 */

interface TextPrompt {
  value: string
  cursor: number
  cursorOffset: number
  placeholder: boolean
  red: boolean
  rendered: string
  scale: number
  render(): void
  bell(): void
  moveCursor(n: number): void
  isCursorAtStart(): boolean
  isCursorAtEnd(): boolean
}

/** How many code units the character ending at `at` takes (2 for a surrogate pair). */
function unitsBefore(text: string, at: number): number {
  return at >= 2 && isHigh(text.charCodeAt(at - 2)) && isLow(text.charCodeAt(at - 1)) ? 2 : 1
}

/** How many code units the character starting at `at` takes. */
function unitsAfter(text: string, at: number): number {
  return isHigh(text.charCodeAt(at)) && isLow(text.charCodeAt(at + 1)) ? 2 : 1
}

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff

/** The methods that move through the text, by code point. */
const codePointMethods: Record<string, (this: TextPrompt, typed: string) => void> = {
  // A typed key: the cursor goes past all of it, not one unit.
  _(this: TextPrompt, typed: string) {
    const before = this.value.slice(0, this.cursor)
    this.value = `${before}${typed}${this.value.slice(this.cursor)}`
    this.red = false
    this.cursor = this.placeholder ? 0 : before.length + typed.length
    this.render()
  },
  // Backspace: the whole character before the cursor.
  delete(this: TextPrompt) {
    if (this.isCursorAtStart()) return this.bell()
    const width = unitsBefore(this.value, this.cursor)
    this.value = `${this.value.slice(0, this.cursor - width)}${this.value.slice(this.cursor)}`
    this.red = false
    if (this.isCursorAtStart()) this.cursorOffset = 0
    else {
      this.cursorOffset += width
      this.moveCursor(-width)
    }
    this.render()
  },
  deleteForward(this: TextPrompt) {
    if (this.cursor * this.scale >= this.rendered.length || this.placeholder) return this.bell()
    const width = unitsAfter(this.value, this.cursor)
    this.value = `${this.value.slice(0, this.cursor)}${this.value.slice(this.cursor + width)}`
    this.red = false
    if (this.isCursorAtEnd()) this.cursorOffset = 0
    else this.cursorOffset += width
    this.render()
  },
  left(this: TextPrompt) {
    if (this.cursor <= 0 || this.placeholder) return this.bell()
    this.moveCursor(-unitsBefore(this.value, this.cursor))
    this.render()
  },
  right(this: TextPrompt) {
    if (this.cursor * this.scale >= this.rendered.length || this.placeholder) return this.bell()
    this.moveCursor(unitsAfter(this.value, this.cursor))
    this.render()
  },
}

/** Makes every text prompt of `prompts` (the one `import prompts from 'prompts'` runs) take whole characters. */
export function useCodePointTextPrompt(): void {
  const TextPromptClass = createRequire(import.meta.url)('prompts/lib/elements/text.js') as { prototype: TextPrompt }
  Object.assign(TextPromptClass.prototype, codePointMethods)
}
