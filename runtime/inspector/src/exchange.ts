import { type Artifact, type Part, TERMINAL_STATES, textOf, type Update } from './model'
import type { Exchange } from './state'

/** What the stream's updates do to the exchange they answer, and how the timeline names them. */

/** Appends a chunk's parts to an artifact: consecutive texts join, so Markdown renders whole. */
function appendParts(parts: Part[], more: Part[]): Part[] {
  const out = [...parts]
  for (const part of more) {
    const last = out[out.length - 1]
    if (part.kind === 'text' && last?.kind === 'text')
      out[out.length - 1] = { kind: 'text', text: last.text + part.text }
    else out.push(part)
  }
  return out
}

function withArtifact(artifacts: Artifact[], artifact: Artifact, append: boolean): Artifact[] {
  const at = artifacts.findIndex((known) => known.artifactId === artifact.artifactId)
  if (at < 0) return [...artifacts, artifact]
  const next = [...artifacts]
  next[at] = append ? { ...artifacts[at]!, parts: appendParts(artifacts[at]!.parts, artifact.parts) } : artifact
  return next
}

const summaryOfParts = (parts: Part[]) =>
  textOf(parts) || (parts[0]?.kind === 'data' ? JSON.stringify(parts[0].data).slice(0, 200) : '')

/**
 * An error as the page shows it: its code (JSON-RPC's, or REST's HTTP status) and status name, its message, the A2A
 * error type its ErrorInfo names, and the answer's HTTP status when the code does not say it already.
 */
export function errorText(error: Extract<Update, { kind: 'error' }>): string {
  const head = [error.code || '', error.status ?? ''].filter(Boolean).join(' ')
  const http = error.httpStatus && error.httpStatus !== error.code ? ` (HTTP ${error.httpStatus})` : ''
  return `${head ? `${head}: ` : ''}${error.message}${error.reason ? ` [${error.reason}]` : ''}${http}`
}

/** What an update does to the exchange it answers. */
export function applied(exchange: Exchange, update: Update): Exchange {
  switch (update.kind) {
    case 'status': {
      const next: Exchange = {
        ...exchange,
        taskId: update.taskId || exchange.taskId,
        contextId: update.contextId || exchange.contextId,
        state: update.state,
      }
      const said = update.message ? summaryOfParts(update.message.parts) : ''
      if (update.state === 'working' && said) next.progress = [...exchange.progress, said]
      if (update.state === 'input-required' || update.state === 'auth-required')
        next.question = said || 'The agent needs more input.'
      else if (update.message && (update.state === 'failed' || update.state === 'rejected')) next.error = said
      else if (update.message && update.state !== 'working') next.reply = update.message
      return next
    }
    case 'artifact':
      return {
        ...exchange,
        taskId: update.taskId || exchange.taskId,
        artifacts: withArtifact(exchange.artifacts, update.artifact, update.append),
      }
    case 'task': {
      const { task } = update
      // A follow-up's stream opens with the whole task: the earlier turns' artifacts belong to the earlier exchanges.
      const artifacts = exchange.followUp && !TERMINAL_STATES.has(task.state) ? exchange.artifacts : task.artifacts
      const next: Exchange = { ...exchange, taskId: task.id, contextId: task.contextId, state: task.state, artifacts }
      const said = task.statusMessage ? summaryOfParts(task.statusMessage.parts) : ''
      if (task.state === 'input-required' || task.state === 'auth-required')
        next.question = said || 'The agent needs more input.'
      else if (task.state === 'failed' || task.state === 'rejected') next.error = said || `The task ${task.state}`
      else if (task.statusMessage && task.state !== 'working') next.reply = task.statusMessage
      return next
    }
    case 'message':
      return {
        ...exchange,
        reply: update.message,
        contextId: update.message.contextId ?? exchange.contextId,
        state: 'replied',
      }
    case 'error':
      // Before any answer of the agent's the exchange was sending: refused, it is over (the task, if any, says more).
      return { ...exchange, error: errorText(update), state: exchange.state === 'sending' ? 'error' : exchange.state }
  }
}

export function describeUpdate(update: Update): string {
  switch (update.kind) {
    case 'status':
      return `state → ${update.state}${update.message ? `: ${summaryOfParts(update.message.parts).slice(0, 120)}` : ''}${update.final ? ' (final)' : ''}`
    case 'artifact':
      return `artifact ${update.artifact.name ?? update.artifact.artifactId.slice(0, 8)}${update.append ? ' chunk' : ''}${update.lastChunk ? ' (last chunk)' : ''}: ${JSON.stringify(summaryOfParts(update.artifact.parts).slice(0, 120))}`
    case 'task':
      return `task ${update.task.id.slice(0, 8)} ${update.task.state}`
    case 'message':
      return `message: ${summaryOfParts(update.message.parts).slice(0, 120)}`
    case 'error':
      return `error ${errorText(update)}`
  }
}
