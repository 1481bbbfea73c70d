import { relative } from 'node:path'

/**
 * Where and why the agent failed to load, as "src/agent.ts:4:2 ParseError: Unexpected token": the first
 * place in the project's own files (not node_modules) that the error's message or stack names.
 */
export function describeLoadFailure(error: unknown, root: string): string {
  const err = error instanceof Error ? error : new Error(String(error))
  const firstLine = err.message.split('\n')[0]!.trim()
  const cause = firstLine.includes(':') && /^[A-Z]\w*Error:/.test(firstLine) ? firstLine : `${err.name}: ${firstLine}`
  const text = `${err.message}\n${err.stack ?? ''}`
  for (const match of text.matchAll(/(?:file:\/\/)?(\/[^\s():]+):(\d+):(\d+)/g)) {
    const [, path, line, column] = match
    if (!path!.startsWith(root) || path!.includes('/node_modules/')) continue
    return `${relative(root, path!)}:${line}:${column} ${cause}`
  }
  return cause
}
