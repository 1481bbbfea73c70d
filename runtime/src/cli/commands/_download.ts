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

/**
 * Saves a task's artifacts into `dir`: each file part under its own name (inline bytes decoded, a URL fetched
 * without the agent's credentials: the address is the agent's to give, not a place to send them), each text part
 * as `.txt` (`.md` for markdown) and each data part as `.json`, named after the artifact. A name is reduced to its
 * last segment, so nothing is written outside `dir`, and an existing file is never overwritten (`name-2.ext`…).
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
    for (const [index, part] of artifact.parts.entries()) {
      const name = part.filename
        ? safeName(part.filename)
        : `${stem}${artifact.parts.length > 1 ? `-${index + 1}` : ''}${extensionOf(part)}`
      saved.push(await write(options.dir, name, await contentOf(part, options.signal)))
    }
  }
  return saved
}

async function contentOf(part: Part, signal: AbortSignal): Promise<Uint8Array> {
  if (part.text !== undefined) return Buffer.from(part.text)
  if (part.data !== undefined) return Buffer.from(`${JSON.stringify(part.data, null, 2)}\n`)
  if (part.raw !== undefined) return Buffer.from(part.raw, 'base64')
  if (part.url !== undefined) {
    const response = await fetch(part.url, { signal })
    if (!response.ok) throw new Error(`${part.url} answered HTTP ${response.status}`)
    const length = Number(response.headers.get('content-length') ?? 0)
    if (length > MOST_BYTES) throw new Error(`${part.url} is ${length} bytes, more than the ${MOST_BYTES} saved`)
    const bytes = new Uint8Array(await response.arrayBuffer())
    if (bytes.length > MOST_BYTES) throw new Error(`${part.url} is more than the ${MOST_BYTES} bytes saved`)
    return bytes
  }
  return new Uint8Array()
}

function extensionOf(part: Part): string {
  if (part.data !== undefined) return '.json'
  if (part.text !== undefined) return part.mediaType === 'text/markdown' ? '.md' : '.txt'
  return ''
}

/** The last segment of a name, without controls or separators: never a path out of the folder. */
function safeName(name: string): string {
  const cleaned = printableLine(basename(name.replaceAll('\\', '/'))).trim()
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? 'artifact' : cleaned
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
