import { useEffect, useState } from 'preact/hooks'
import { taskIn } from '../dialects'
import { DIALECTS, type Dialect, speaksV1 } from '../model'
import { callForResult } from '../rpc'
import { replay } from '../session'
import { dialect, selectedTask, taskFeed, tasks, timelines } from '../state'
import { useStore } from '../store'
import { JsonTree } from './JsonTree'
import { Parts } from './Parts'
import { Since } from './Since'
import { StateBadge } from './StateBadge'
import { Timeline } from './Timeline'
import { TaskTraces } from './Traces'

function StoredTask({ taskId, chosen }: { taskId: string; chosen: Dialect }) {
  const [answer, setAnswer] = useState<{ result?: unknown; error?: string }>()
  const line = useStore(tasks).get(taskId)
  // Fetched again when the task changes state, so the stored view follows it.
  useEffect(() => {
    let current = true
    void callForResult(chosen, 'get', { id: taskId }).then((got) => current && setAnswer(got))
    return () => {
      current = false
    }
  }, [taskId, chosen, line?.state])
  if (!answer) return <p class="muted">Loading the task…</p>
  if (answer.error) return <p class="error">{answer.error}</p>
  const task = taskIn(answer.result)
  return (
    <div class="stored-task">
      <p>
        <StateBadge state={task.state} /> <Since iso={task.timestamp} />, context <code>{task.contextId}</code>
      </p>
      {task.history.map((message, i) => (
        <div key={message.messageId ?? i} class={`bubble ${message.role}`}>
          <span class="who">{message.role === 'user' ? 'User' : 'Agent'}</span>
          <Parts parts={message.parts} />
        </div>
      ))}
      {task.artifacts.map((artifact) => (
        <article class="artifact bubble agent" key={artifact.artifactId} aria-label={artifact.name ?? 'Artifact'}>
          <span class="who">Artifact{artifact.name ? ` ${artifact.name}` : ''}</span>
          <Parts parts={artifact.parts} />
        </article>
      ))}
      {task.statusMessage && (
        <div class="bubble agent">
          <span class="who">Status message</span>
          <Parts parts={task.statusMessage.parts} />
        </div>
      )}
      <details>
        <summary>As served (JSON)</summary>
        <JsonTree value={answer.result} />
      </details>
    </div>
  )
}

export function Tasks() {
  const list = [...useStore(tasks).values()].sort((a, b) => (a.at < b.at ? 1 : -1))
  const selected = useStore(selectedTask)
  const chosen = useStore(dialect)
  const recorded = useStore(timelines)
  const feed = useStore(taskFeed)
  const traces = useStore(tasks).get(selected ?? '')?.traces
  return (
    <section class="tasks" aria-labelledby="tasks-title">
      <div class="task-list">
        <h2 id="tasks-title">Tasks</h2>
        {feed.refused ? (
          // Said as a refusal, never an empty list: "no tasks" would be a lie about the agent.
          <p class="error" role="alert">
            The dev server lists tasks only for a credential the agent accepts, and refused this page's: {feed.refused}.
            Enter yours above; the list shows the tasks of that credential only.
          </p>
        ) : list.length === 0 ? (
          <p class="muted">No tasks yet: they appear here live, from this page or any other client.</p>
        ) : (
          <ul aria-label="Tasks, newest first">
            {list.map((task) => (
              <li key={task.id}>
                <button
                  type="button"
                  class="task-line"
                  aria-current={task.id === selected}
                  onClick={() => selectedTask.set(task.id)}
                >
                  <StateBadge state={task.state} />
                  <span class="task-title">{task.title || '(no text)'}</span>
                  <Since iso={task.at} />
                  <code class="muted">{task.id.slice(0, 8)}</code>
                </button>
              </li>
            ))}
          </ul>
        )}
      </div>
      <div class="task-detail">
        {selected ? (
          <>
            <h2 id="task-heading" tabIndex={-1}>
              Task <code>{selected}</code>
            </h2>
            <TaskTraces traces={traces} />
            <h3>Timeline</h3>
            {recorded.get(selected) ? (
              <Timeline timeline={recorded.get(selected)!} traces={traces} />
            ) : (
              <p class="muted">
                This page did not send this task's messages.{' '}
                <button type="button" onClick={() => void replay(selected, chosen)}>
                  Replay its events
                </button>{' '}
                asks the agent for the events it keeps of it, in the chosen dialect, each at the time it happened.
              </p>
            )}
            <h3>Stored task ({speaksV1(chosen) ? 'A2A v1.0' : DIALECTS.find((d) => d.id === chosen)?.label} shape)</h3>
            <StoredTask taskId={selected} chosen={chosen} />
          </>
        ) : (
          <p class="muted">Pick a task to see its timeline.</p>
        )}
      </div>
    </section>
  )
}
