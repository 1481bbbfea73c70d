/**
 * What `a2a send` prints, kept apart so the answer on stdout stays exactly the agent's text (pipe-able) while
 * progress and notes go to stderr without breaking it:
 * - stderr on a terminal: progress is a status line that the next piece of the answer (or note) replaces;
 *   when stdout is the same screen it shows only while the answer is at the start of a line.
 * - stderr elsewhere (a file, a pipe, `2>&1`): progress is a line, written only at a line boundary of the
 *   answer; progress arriving mid-line waits for the line to end (the latest one wins).
 */
export interface SendOutput {
  /** A piece of the answer, as it arrives. */
  answer(text: string): void
  /** Ends the answer's current line, if a piece left it open. */
  endLine(): void
  /** What the agent says it is doing. */
  progress(text: string): void
  /** A note that stays: the agent addressed, a question, the outcome. Ends an open answer line first. */
  note(text: string): void
  /** Leaves the terminal clean: the answer's line ended, no status line (also before an error is printed). */
  finish(): void
}

interface Streams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean }
  stderr: NodeJS.WritableStream & { isTTY?: boolean }
}

const CLEAR_LINE = '\r\x1b[2K'

export function createSendOutput({ stdout, stderr }: Streams = process): SendOutput {
  const statusLine = stderr.isTTY === true
  // Both on one terminal: the status line and the answer share the cursor.
  const sameScreen = statusLine && stdout.isTTY === true
  let midLine = false
  let held: string | undefined
  let shown = false

  const clearStatus = () => {
    if (!shown) return
    stderr.write(CLEAR_LINE)
    shown = false
  }
  const show = (text: string) => {
    if (statusLine) {
      stderr.write(`${CLEAR_LINE}… ${text}`)
      shown = true
    } else stderr.write(`… ${text}\n`)
  }
  const atLineStart = () => {
    midLine = false
    if (held === undefined) return
    const text = held
    held = undefined
    show(text)
  }

  function endLine() {
    if (midLine) {
      clearStatus()
      stdout.write('\n')
    }
    atLineStart()
  }

  return {
    answer(text) {
      if (!text) return
      clearStatus()
      stdout.write(text)
      if (text.endsWith('\n')) atLineStart()
      else midLine = true
    },
    endLine,
    progress(text) {
      // Off the answer's screen a status line can change at any time; a line must wait for a line boundary.
      if (midLine && !(statusLine && !sameScreen)) held = text
      else show(text)
    },
    note(text) {
      held = undefined
      endLine()
      clearStatus()
      stderr.write(`${text}\n`)
    },
    finish() {
      held = undefined
      endLine()
      clearStatus()
    },
  }
}
