import type { Agent, ExecutionContext } from '../agent.js'
import { A2AError, TaskTerminalError } from '../errors.js'
import type { Logger } from '../logger.js'
import { isSettled, isTerminal } from './_lifecycle.js'
import type { TaskRun } from './_task-run.js'

/**
 * Runs one turn of the agent on a task and makes sure it ends it: a deadline fails a stuck turn, a throw fails
 * the task, and a return that leaves it running fails it too, each with the reason and a log line saying where.
 * `prepare` runs first (the send's webhook saved); its failure fails the task before the agent starts.
 */
export async function runAgentTurn(
  agent: Agent,
  run: TaskRun,
  context: ExecutionContext,
  prepare: ((taskId: string) => Promise<void>) | undefined,
  logger: Logger,
): Promise<void> {
  const name = agent.card.name
  // A deadline ends a stuck turn: failed with the reason, the signal fired; the agent's late moves are refused.
  const deadline =
    agent.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          if (isSettled(run.state)) return
          const reason = `The task took longer than its limit of ${agent.timeoutMs} ms`
          logger.warn(`Agent "${name}": task ${run.id} passed its time limit (${agent.timeoutMs} ms); it is failed`)
          run.abort(reason)
          run.setStatus('failed', reason)
        }, agent.timeoutMs)
  try {
    if (prepare) {
      try {
        await prepare(run.id)
      } catch (error) {
        logger.error(`Task ${run.id} could not be prepared to run; it is failed`, error)
        run.setStatus(
          'failed',
          `The task could not start: ${error instanceof A2AError ? error.message : 'the server could not save its settings'}`,
        )
        return
      }
    }
    // An agent that may reply with a message starts a new task at its first move (see `messageReplies`).
    if (agent.messageReplies && run.task.history.length === 1) run.startOnFirstMove()
    else run.setStatus('working')
    await agent.execute(context, run)
  } catch (error) {
    if (!isTerminal(run.state)) {
      logger.error(`Agent "${name}" threw while running task ${run.id}; the task is failed`, error)
      run.setStatus('failed', 'The agent failed with an internal error before finishing the task')
    } else if (error instanceof TaskTerminalError && run.signal.aborted) {
      // The runtime ended the task (a deadline, a budget, a lost lease, a shutdown: said when it happened, with the
      // signal fired) and the agent's next move was refused: the expected way its code stops, not a fault.
      logger.debug(`Agent "${name}" stopped on a refused move after task ${run.id} had ended (${run.state})`)
    } else if (run.state !== 'canceled') {
      logger.error(`Agent "${name}" threw after task ${run.id} had ended (${run.state})`, error)
    }
  } finally {
    clearTimeout(deadline)
    if (!isSettled(run.state)) {
      logger.warn(
        `Agent "${name}" returned without ending task ${run.id}; the task is failed. End every path with task.complete(), task.fail(), task.cancel() or task.inputRequired().`,
      )
      run.setStatus('failed', 'The agent returned without completing the task')
    }
  }
}
