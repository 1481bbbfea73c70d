import { relative, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Finds "<file>:<line>:<column>" under `root`, written as a path or as a file URL. The root is matched
 * literally rather than by a generic path pattern because a project path may hold spaces or non-ASCII
 * letters, which stacks print as they are and file URLs percent-encode.
 */
function locationsUnder(root: string): RegExp {
  const base = root.endsWith(sep) ? root : `${root}${sep}`
  const asPath = `(?<path>${escapeRegExp(base)}[^\\n():]*?)`
  const asUrl = `(?<url>${escapeRegExp(pathToFileURL(base).href)}[^\\s():]*?)`
  return new RegExp(`(?:${asUrl}|${asPath}):(?<line>\\d+):(?<column>\\d+)`, 'g')
}

/**
 * Where and why the agent failed to load, as "src/agent.ts:4:2 ParseError: Unexpected token": the first
 * place in the project's own files (not node_modules) that the error's message or stack names.
 */
export function describeLoadFailure(error: unknown, root: string): string {
  const err = error instanceof Error ? error : new Error(String(error))
  const firstLine = err.message.split('\n')[0]!.trim()
  const cause = firstLine.includes(':') && /^[A-Z]\w*Error:/.test(firstLine) ? firstLine : `${err.name}: ${firstLine}`
  const text = `${err.message}\n${err.stack ?? ''}`
  for (const match of text.matchAll(locationsUnder(root))) {
    const { url, path, line, column } = match.groups!
    let file: string
    try {
      file = url ? fileURLToPath(url) : path!
    } catch {
      continue // a malformed escape in what only looked like a file URL
    }
    // Inside the project only: a project that itself lives under a node_modules folder still has locations.
    const inProject = relative(root, file)
    if (inProject.split(sep).includes('node_modules')) continue
    return `${inProject}:${line}:${column} ${cause}`
  }
  return cause
}
