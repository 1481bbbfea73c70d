import { agents } from '../state'
import { useStore } from '../store'

/**
 * The agents of a dev server that serves a folder of them, each a link to its own page (`/<name>/__a2a/`): its card,
 * its tasks, its send box. Nothing for a dev server of one agent.
 */
export function AgentSwitch() {
  const known = useStore(agents)
  if (!known) return null
  return (
    <nav class="agent-switch" aria-label="Agents">
      {known.names.map((name) => (
        <a
          key={name}
          href={`/${encodeURIComponent(name)}/__a2a/`}
          aria-current={name === known.current ? 'page' : undefined}
        >
          {name}
        </a>
      ))}
    </nav>
  )
}
