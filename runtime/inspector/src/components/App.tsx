import { announcement, card, type Tab, tab } from '../state'
import { useStore } from '../store'
import { AgentSwitch } from './AgentSwitch'
import { CardView } from './CardView'
import { Chat } from './Chat'
import { Credentials } from './Credentials'
import { DialectPicker } from './DialectPicker'
import { LoadBanner } from './LoadBanner'
import { PushView } from './PushView'
import { Tasks } from './Tasks'

const TABS: ReadonlyArray<{ id: Tab; label: string }> = [
  { id: 'chat', label: 'Chat' },
  { id: 'tasks', label: 'Tasks' },
  { id: 'card', label: 'Card' },
  { id: 'push', label: 'Push' },
]

export function App() {
  const current = useStore(tab)
  const served = useStore(card)
  const said = useStore(announcement)
  return (
    <>
      <div class="visually-hidden" aria-live="polite">
        {said}
      </div>
      <header class="top">
        <h1>A2A inspector{served?.name ? <span class="agent-name"> · {String(served.name)}</span> : null}</h1>
        <AgentSwitch />
        <Credentials />
        <DialectPicker />
      </header>
      <LoadBanner />
      <nav class="tabs" aria-label="Views">
        {TABS.map((t) => (
          <button
            key={t.id}
            type="button"
            aria-current={current === t.id ? 'page' : undefined}
            onClick={() => tab.set(t.id)}
          >
            {t.label}
          </button>
        ))}
      </nav>
      <main>
        {current === 'chat' && <Chat />}
        {current === 'tasks' && <Tasks />}
        {current === 'card' && <CardView />}
        {current === 'push' && <PushView />}
      </main>
    </>
  )
}
