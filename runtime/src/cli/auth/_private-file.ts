import { closeSync, fsyncSync, openSync, unlinkSync, writeSync } from 'node:fs'

/**
 * What the token file and its lock share: files of this user's only, created where nothing is (a file, or a link
 * planted in its place, is never opened), and their failures said in a word.
 */

/**
 * Creates `path` holding `text`, with mode 0600 from the start ('wx': EEXIST where anything is already), written
 * through to the disk before it is closed. A file that could not be written is removed again.
 */
export function createPrivateFile(path: string, text: string): void {
  const fd = openSync(path, 'wx', 0o600)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } catch (error) {
    try {
      closeSync(fd)
    } catch {}
    try {
      unlinkSync(path)
    } catch {}
    throw error
  }
  closeSync(fd)
}

/** A file operation's failure in a word: its error code (`EACCES`…), else its message. */
export function failureCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message
}
