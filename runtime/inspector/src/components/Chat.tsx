import { useEffect, useRef, useState } from 'preact/hooks'
import { type Part, speaksV1, TERMINAL_STATES } from '../model'
import { cancel, newContext, send } from '../session'
import { card, contextId, dialect, type Exchange, exchanges, pushUrl, selectedTask, tab } from '../state'
import { useStore } from '../store'
import { Parts } from './Parts'
import { StateBadge } from './StateBadge'

interface Skill {
  id: string
  name: string
}

async function fileToPart(file: File): Promise<Part> {
  const bytes = new Uint8Array(await file.arrayBuffer())
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return { kind: 'file', name: file.name, mimeType: file.type || 'application/octet-stream', bytes: btoa(binary) }
}

function SentParts({ parts }: { parts: Part[] }) {
  return (
    <>
      {parts.map((part, i) =>
        part.kind === 'text' ? (
          <p key={i} class="sent-text">
            {part.text}
          </p>
        ) : part.kind === 'data' ? (
          <pre key={i} class="sent-data">
            {JSON.stringify(part.data, null, 2)}
          </pre>
        ) : (
          <p key={i} class="muted">
            File: {part.name}
          </p>
        ),
      )}
    </>
  )
}

function AnswerForm({ exchange }: { exchange: Exchange }) {
  const [text, setText] = useState('')
  const input = useRef<HTMLInputElement>(null)
  // The question is what the developer answers next: the box takes the focus when it appears.
  useEffect(() => input.current?.focus(), [])
  const id = `answer-${exchange.key}`
  return (
    <form
      class="answer-form"
      onSubmit={(event) => {
        event.preventDefault()
        if (!text.trim()) return
        void send(exchange.dialect, {
          parts: [{ kind: 'text', text }],
          taskId: exchange.taskId!,
          ...(exchange.contextId && { contextId: exchange.contextId }),
        })
      }}
    >
      <label for={id}>Your answer</label>
      <input
        id={id}
        ref={input}
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
        autoComplete="off"
      />
      <button type="submit">Answer</button>
    </form>
  )
}

function ExchangeView({ exchange }: { exchange: Exchange }) {
  const cancelable =
    !!exchange.taskId && !TERMINAL_STATES.has(exchange.state) && exchange.state !== 'replied' && !exchange.answered
  return (
    <li class="exchange" data-state={exchange.state} data-task-id={exchange.taskId}>
      <div class="bubble user">
        <span class="who">You{exchange.skillId ? ` → ${exchange.skillId}` : ''}</span>
        <SentParts parts={exchange.sent} />
      </div>
      <div class="bubble agent" aria-busy={exchange.running}>
        <div class="meta">
          <span class="who">Agent</span>
          <StateBadge state={exchange.state} />
          {exchange.taskId && (
            <button
              type="button"
              class="link"
              onClick={() => {
                selectedTask.set(exchange.taskId)
                tab.set('tasks')
                requestAnimationFrame(() => document.getElementById('task-heading')?.focus())
              }}
            >
              Timeline of task {exchange.taskId.slice(0, 8)}
            </button>
          )}
          {cancelable && (
            <button
              type="button"
              class="danger"
              onClick={() => {
                // The button goes once the task is canceled: the message box keeps the focus instead.
                document.getElementById('message')?.focus()
                void cancel(exchange.key)
              }}
            >
              Cancel task
            </button>
          )}
        </div>
        {exchange.progress.length > 0 && (
          <ul class="progress" aria-label="Progress">
            {exchange.progress.map((line, i) => (
              <li key={i}>{line}</li>
            ))}
          </ul>
        )}
        {exchange.artifacts.map((artifact) => (
          <article class="artifact" key={artifact.artifactId} aria-label={artifact.name ?? 'Answer'}>
            {artifact.name && <h3 class="artifact-name">{artifact.name}</h3>}
            <Parts parts={artifact.parts} />
          </article>
        ))}
        {exchange.reply && (
          <div class="reply">
            <Parts parts={exchange.reply.parts} />
          </div>
        )}
        {exchange.question && (
          <div class="question">
            <p>
              <strong>The agent asks:</strong> {exchange.question}
            </p>
            {exchange.state === 'input-required' && !exchange.answered && <AnswerForm exchange={exchange} />}
          </div>
        )}
        {exchange.error && (
          <p class="error" role="alert">
            {exchange.error}
          </p>
        )}
      </div>
    </li>
  )
}

export function Chat() {
  const list = useStore(exchanges)
  const context = useStore(contextId)
  const served = useStore(card)
  const receiver = useStore(pushUrl)
  const [text, setText] = useState('')
  const [skillId, setSkillId] = useState('')
  const [data, setData] = useState('')
  const [dataError, setDataError] = useState('')
  const [push, setPush] = useState(false)
  const fileInput = useRef<HTMLInputElement>(null)
  const skills = (served?.skills as Skill[] | undefined) ?? []
  const canPush = (served?.capabilities as { pushNotifications?: boolean } | undefined)?.pushNotifications === true

  const submit = async (event: Event) => {
    event.preventDefault()
    setDataError('')
    const parts: Part[] = []
    if (text.trim()) parts.push({ kind: 'text', text })
    if (data.trim()) {
      let value: unknown
      try {
        value = JSON.parse(data)
      } catch (error) {
        setDataError(`The data part is not JSON: ${(error as Error).message}`)
        return
      }
      // v0.3 and the platform carry an object in a data part; v1.0 any JSON value.
      if (!speaksV1(dialect.value) && (typeof value !== 'object' || value === null || Array.isArray(value))) {
        setDataError('The data part must be a JSON object in this dialect (A2A v1.0 takes any JSON value)')
        return
      }
      parts.push({ kind: 'data', data: value })
    }
    const file = fileInput.current?.files?.[0]
    if (file) parts.push(await fileToPart(file))
    if (!parts.length) return
    // A question waiting for an answer: the next message answers it, on the same task.
    const waiting = list.findLast((exchange) => exchange.state === 'input-required' && !exchange.answered)
    const taken = await send(dialect.value, {
      parts,
      ...(contextId.value && { contextId: contextId.value }),
      ...(waiting?.taskId && { taskId: waiting.taskId }),
      ...(skillId && { skillId }),
      ...(push && canPush && receiver && { pushUrl: receiver }),
    })
    // What was typed stays until the agent takes it: a refused message can be fixed and sent again.
    if (!taken) return
    setText('')
    setData('')
    if (fileInput.current) fileInput.current.value = ''
  }

  return (
    <section class="chat" aria-labelledby="chat-title">
      <div class="chat-head">
        <h2 id="chat-title">Chat</h2>
        <span class="muted">Context: {context ? <code>{context}</code> : 'a new one'}</span>
        <button
          type="button"
          onClick={() => {
            newContext()
            document.getElementById('message')?.focus()
          }}
        >
          New context
        </button>
      </div>
      {list.length === 0 ? (
        <p class="muted empty">Send a message to start a task. Answers stream in as the agent writes them.</p>
      ) : (
        <ol class="exchanges" aria-label="Conversation">
          {list.map((exchange) => (
            <ExchangeView key={exchange.key} exchange={exchange} />
          ))}
        </ol>
      )}
      <form class="composer" onSubmit={submit}>
        <label for="message">Message</label>
        <textarea
          id="message"
          rows={3}
          value={text}
          placeholder="Ask the agent something"
          aria-describedby="message-hint"
          onInput={(event) => setText(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) void submit(event)
          }}
        />
        <span id="message-hint" class="muted">
          Ctrl+Enter sends.
        </span>
        <div class="composer-options">
          <label>
            Skill{' '}
            <select value={skillId} onChange={(event) => setSkillId(event.currentTarget.value)}>
              <option value="">Any (the agent decides)</option>
              {skills.map((skill) => (
                <option key={skill.id} value={skill.id}>
                  {skill.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            File <input type="file" ref={fileInput} />
          </label>
          <label>
            <input
              type="checkbox"
              checked={push && canPush}
              disabled={!canPush}
              aria-describedby={canPush ? undefined : 'push-unavailable'}
              onChange={(event) => setPush(event.currentTarget.checked)}
            />{' '}
            Push notifications to the inspector
          </label>
          {!canPush && (
            <span id="push-unavailable" class="muted">
              (the card does not declare <code>capabilities.pushNotifications</code>)
            </span>
          )}
        </div>
        <details class="data-part">
          <summary>Data part (JSON)</summary>
          <label for="data-part">JSON value sent as a data part</label>
          <textarea
            id="data-part"
            rows={3}
            value={data}
            onInput={(event) => {
              setData(event.currentTarget.value)
              setDataError('')
            }}
            aria-invalid={!!dataError}
          />
          {dataError && (
            <p class="error" role="alert">
              {dataError}
            </p>
          )}
        </details>
        <button type="submit" class="primary">
          Send
        </button>
      </form>
    </section>
  )
}
