/**
 * The byte budgets' defaults follow the heap the process may use: a fixed number that keeps a 4 GiB heap busy
 * would kill a container given 512 MiB. A budget's default is its ceiling, or a quarter of the heap limit when
 * that is less (the store's tasks and the running tasks then take at most half of the heap together, leaving the
 * rest to requests being parsed, answers being written and the collector's room to work).
 */

const SHARE_OF_HEAP = 4

/**
 * The most the JavaScript heap may grow to, as V8 says (Node, Deno; `--max-old-space-size` decides it), or
 * undefined where no such limit is told (Bun's engine grows its heap otherwise; Workers have limits of their own).
 */
function heapLimit(): number | undefined {
  const process = (globalThis as { process?: NodeLikeProcess }).process
  if (process?.versions?.v8 === undefined || process.versions.bun !== undefined) return undefined
  try {
    const limit = process.getBuiltinModule?.('node:v8')?.getHeapStatistics().heap_size_limit
    return typeof limit === 'number' && limit > 0 ? limit : undefined
  } catch {
    return undefined
  }
}

interface NodeLikeProcess {
  versions?: { v8?: string; bun?: string }
  getBuiltinModule?: (name: 'node:v8') => { getHeapStatistics(): { heap_size_limit: number } } | undefined
}

/** `ceiling`, or a quarter of the heap limit when that is less. */
export function heapShare(ceiling: number): number {
  const limit = heapLimit()
  return limit === undefined ? ceiling : Math.min(ceiling, Math.floor(limit / SHARE_OF_HEAP))
}
