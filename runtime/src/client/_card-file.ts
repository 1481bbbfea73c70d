import { open } from 'node:fs/promises'
import { homedir } from 'node:os'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { A2AClientFailure } from './errors.js'

/**
 * A card read from disk (a path, `~/…`, or a `file://` URL), at most `maxBytes`. Loaded only for a card on disk, so
 * the client runs where there is no file system.
 */

export function cardPath(reference: string): string {
  if (reference.startsWith('file:')) {
    try {
      return fileURLToPath(reference)
    } catch (error) {
      throw new A2AClientFailure('card-not-found', `${reference} is not a file URL: ${(error as Error).message}`)
    }
  }
  if (reference === '~' || reference.startsWith('~/')) return resolve(homedir(), reference.slice(2))
  return resolve(reference)
}

export async function readCardFile(path: string, maxBytes: number): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(path, 'r')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code)
    throw new A2AClientFailure('card-not-found', `Cannot read the card ${path}: ${why}`, { cause: error })
  }
  try {
    if ((await handle.stat()).isDirectory())
      throw new A2AClientFailure('card-not-found', `${path} is a folder, not a card file`)
    const buffer = Buffer.alloc(maxBytes + 1)
    let length = 0
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null)
      if (bytesRead === 0) break
      length += bytesRead
      if (length > maxBytes)
        throw new A2AClientFailure('card-invalid', `The card ${path} is larger than the ${maxBytes} bytes read`)
    }
    return buffer.subarray(0, length).toString('utf8')
  } finally {
    await handle.close()
  }
}
