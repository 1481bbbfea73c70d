import { mkdir, open } from 'node:fs/promises'
import { basename, extname, join } from 'node:path'
import type { Part, Task } from '../../client/types.js'
import { UsageError } from '../output/_failures.js'
import { printableLine } from '../output/_sanitize.js'

export interface Saved {
  path: string
  bytes: number
}

/** The most bytes one downloaded file may have (a part's URL could name anything). */
const MOST_BYTES = 256 * 1024 * 1024

/** How long a download may go without a byte (its headers, then each chunk) before it is given up. */
const STALL_MS = 30_000

/**
 * Saves a task's artifacts into `dir`: each file part under its own name (inline bytes decoded, a URL fetched
 * without the agent's credentials: the address is the agent's to give, not a place to send them), each text part
 * as `.txt` (`.md` for markdown) and each data part as `.json`, named after the artifact. A name is reduced to its
 * last segment, so nothing is written outside `dir`, never starts with a dot (no `.env` or `.npmrc` the next
 * command would read), and an existing file is never overwritten (`name-2.ext`…). A fetched file is read as it
 * comes, up to 256 MiB, and given up when it stalls for 30 s (or the command's signal aborts: Ctrl-C, --timeout).
 */
export async function downloadArtifacts(
  task: Task,
  options: { dir: string; only?: string; signal: AbortSignal },
): Promise<Saved[]> {
  const artifacts = (task.artifacts ?? []).filter(
    (artifact) => options.only === undefined || artifact.artifactId === options.only || artifact.name === options.only,
  )
  if (options.only !== undefined && artifacts.length === 0)
    throw new UsageError(`--artifact: task ${task.id} has no artifact with the id or name '${options.only}'`)
  await mkdir(options.dir, { recursive: true })
  const saved: Saved[] = []
  for (const artifact of artifacts) {
    const stem = safeName(artifact.name || artifact.artifactId)
    const parts = artifact.parts ?? []
    for (const [index, part] of parts.entries()) {
      const name = part.filename
        ? safeName(part.filename)
        : `${stem}${parts.length > 1 ? `-${index + 1}` : ''}${extensionOf(part)}`
      saved.push(await write(options.dir, name, await contentOf(part, options.signal)))
    }
  }
  return saved
}

async function contentOf(part: Part, signal: AbortSignal): Promise<Uint8Array> {
  if (part.text !== undefined) return Buffer.from(part.text)
  if (part.data !== undefined) return Buffer.from(`${JSON.stringify(part.data, null, 2)}\n`)
  if (part.raw !== undefined) return Buffer.from(part.raw, 'base64')
  if (part.url !== undefined) return fetchBounded(part.url, signal)
  return new Uint8Array()
}

/** A file part's URL, read chunk by chunk with a running count (never past MOST_BYTES) and a stall timer. */
async function fetchBounded(url: string, signal: AbortSignal): Promise<Uint8Array> {
  const stall = new AbortController()
  let timer = setTimeout(() => stall.abort(), STALL_MS)
  const alive = () => {
    clearTimeout(timer)
    timer = setTimeout(() => stall.abort(), STALL_MS)
  }
  const shown = printableLine(url)
  try {
    const response = await fetch(url, { signal: AbortSignal.any([signal, stall.signal]) })
    if (!response.ok) throw new DownloadError(`${shown} answered HTTP ${response.status}`)
    const length = Number(response.headers.get('content-length') ?? 0)
    if (length > MOST_BYTES) throw tooLarge(shown)
    const chunks: Uint8Array[] = []
    let total = 0
    for await (const chunk of response.body ?? []) {
      alive()
      total += chunk.length
      if (total > MOST_BYTES) {
        await response.body?.cancel().catch(() => {})
        throw tooLarge(shown)
      }
      chunks.push(chunk)
    }
    return Buffer.concat(chunks, total)
  } catch (error) {
    // Ctrl-C and --timeout are the command's own: reported as such.
    if (signal.aborted || error instanceof DownloadError) throw error
    if (stall.signal.aborted) throw new DownloadError(`${shown} sent nothing for ${STALL_MS / 1000} s`, error)
    throw new DownloadError(`Cannot read ${shown}: ${(error as Error).message}`, error)
  } finally {
    clearTimeout(timer)
  }
}

/** A file that could not be saved (its address is not the agent's: none of the agent's failures applies). */
class DownloadError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause })
  }
}

const tooLarge = (url: string) => new DownloadError(`${url} is more than the ${MOST_BYTES} bytes a2a saves of one file`)

function extensionOf(part: Part): string {
  if (part.data !== undefined) return '.json'
  if (part.text !== undefined) return part.mediaType === 'text/markdown' ? '.md' : '.txt'
  return ''
}

/**
 * The last segment of a name, without controls or separators: never a path out of the folder. Its leading dots
 * become underscores: a dotfile there (`.env`, `.npmrc`) would be read as configuration by the next command run in
 * that folder, this CLI's included.
 */
function safeName(name: string): string {
  const cleaned = printableLine(basename(name.replaceAll('\\', '/'))).trim()
  return /^\.*$/.test(cleaned) ? 'artifact' : cleaned.replace(/^\.+/, (dots) => '_'.repeat(dots.length))
}

/** Creates the file exclusively, numbering the name until one is free. */
async function write(dir: string, name: string, content: Uint8Array): Promise<Saved> {
  const extension = extname(name)
  const stem = name.slice(0, name.length - extension.length)
  for (let n = 1; ; n++) {
    const path = join(dir, n === 1 ? name : `${stem}-${n}${extension}`)
    try {
      const file = await open(path, 'wx')
      try {
        await file.writeFile(content)
      } finally {
        await file.close()
      }
      return { path, bytes: content.length }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
}
