import type { StreamResponse } from '../../client/types.js'
import { appendParts, artifactTitle } from './_parts.js'
import { messageBlock, type RenderContext, renderMessage, renderTask, stateLabel, type TaskFacts } from './_render.js'
import type { TextWriter } from './_text-writer.js'

/**
 * `--stream` in `text`: each event as it arrives, in fields and blocks. A task's id and context are printed when
 * first seen; a status update prints its `State`; the chunks of one artifact continue one open `Artifact` block
 * (text chunks joined as the agent sent them), so a streamed answer reads as it is written.
 */
export interface TextStream {
  event(response: StreamResponse): void
  /** What the stream said last about its task: the id, the context and the state. */
  readonly facts: TaskFacts
}

export function createTextStream(writer: TextWriter, context: RenderContext): TextStream {
  const facts: TaskFacts = {}
  const artifactNames = new Map<string, string>()

  const introduce = (taskId: string | undefined, contextId: string | undefined) => {
    if (taskId !== undefined && taskId !== facts.taskId) {
      writer.field('Task', taskId)
      facts.taskId = taskId
      if (contextId !== undefined) writer.field('Context', contextId)
    }
    if (contextId !== undefined) facts.contextId = contextId
  }

  return {
    facts,
    event(response) {
      if ('task' in response && response.task) {
        const { task } = response
        renderTask(writer, task, context)
        Object.assign(facts, { taskId: task.id, contextId: task.contextId, state: task.status?.state })
      } else if ('message' in response && response.message) {
        const { message } = response
        renderMessage(writer, message, context)
        if (message.taskId !== undefined) facts.taskId = message.taskId
        if (message.contextId !== undefined) facts.contextId = message.contextId
      } else if ('statusUpdate' in response && response.statusUpdate) {
        const update = response.statusUpdate
        introduce(update.taskId, update.contextId)
        facts.state = update.status?.state
        writer.field('State', stateLabel(update.status?.state))
        if (update.status?.message) messageBlock(writer, 'Message', update.status.message, context)
      } else if ('artifactUpdate' in response && response.artifactUpdate) {
        const update = response.artifactUpdate
        introduce(update.taskId, update.contextId)
        const { artifact } = update
        if (artifact.name) artifactNames.set(artifact.artifactId, artifact.name)
        const continues = update.append === true && writer.openKey === artifact.artifactId
        if (!continues) {
          const name = artifactNames.get(artifact.artifactId)
          writer.openBlock('Artifact', artifactTitle({ artifactId: artifact.artifactId, name }), artifact.artifactId)
        }
        appendParts(writer, artifact.parts ?? [], context.verbose, true)
        if (update.lastChunk === true) writer.closeBlock()
      } else {
        // An event of a kind this tool does not know is shown, not dropped.
        writer.block('Event', undefined, JSON.stringify(response, null, 2))
      }
    },
  }
}
