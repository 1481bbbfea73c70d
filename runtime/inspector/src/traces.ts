import { authHeaders } from './auth-headers'
import { AGENT_BASE } from './base'
import type { TaskLine, TaskTrace, TimelineEntry } from './state'

/**
 * The trace a timeline entry belongs to: for an SSE frame, the trace that made its event (by its number, from the
 * traces the dev server reports for the task); for another answer, the one noted when it arrived. Undefined when
 * none is known (no telemetry, a request, an event older than the traces the dev server keeps).
 */
export function traceOf(entry: TimelineEntry, traces: TaskTrace[] | undefined): string | undefined {
  if (entry.seq === undefined) return entry.traceId
  if (!traces?.length || entry.seq < traces[0]!.firstSeq) return undefined
  let found: TaskTrace | undefined
  for (const trace of traces) {
    if (trace.firstSeq > entry.seq) break
    found = trace
  }
  return found?.traceId
}

/** The task's traces, each once, in the order they first made an event, with the first event each made. */
export function distinctTraces(traces: TaskTrace[] | undefined): Array<{ traceId: string; firstSeq: number }> {
  const seen = new Map<string, number>()
  for (const trace of traces ?? [])
    if (trace.traceId && !seen.has(trace.traceId)) seen.set(trace.traceId, trace.firstSeq)
  return [...seen].map(([traceId, firstSeq]) => ({ traceId, firstSeq }))
}

/** A trace's page in the viewer `A2A_TRACE_URL` names (`{traceId}` where the id goes). */
export const traceHref = (template: string, traceId: string): string =>
  template.replaceAll('{traceId}', encodeURIComponent(traceId))

/** The trace of the task's latest event, as the dev server has it now; undefined when it cannot say. */
export async function latestTraceOf(taskId: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${AGENT_BASE}__a2a/api/tasks/${encodeURIComponent(taskId)}`, {
      headers: authHeaders(),
      cache: 'no-store',
    })
    return response.ok ? ((await response.json()) as TaskLine).traces?.at(-1)?.traceId : undefined
  } catch {
    return undefined // the dev server is gone: the entry shows no trace
  }
}
