import { useEffect, useState } from 'preact/hooks'
import { fetchCard } from '../dev-channel'
import { DIALECTS, type Dialect } from '../model'
import { dialect, load } from '../state'
import { useStore } from '../store'
import { JsonTree } from './JsonTree'

const ANCHOR = 'card-'

/** The cards there are: a REST client reads the A2A v1.0 card, as a JSON-RPC one does. */
const CARD_DIALECTS = DIALECTS.filter((d) => d.id !== 'a2a-1.0-rest')

/** Moves to a card field shown with its anchor: opens the branches above it, scrolls to it, focuses it. */
function focusField(path: string): boolean {
  const target = document.getElementById(`${ANCHOR}${path}`)
  if (!target) return false
  for (let node = target.parentElement; node; node = node.parentElement)
    if (node instanceof HTMLDetailsElement) node.open = true
  target.scrollIntoView({ block: 'center' })
  target.focus()
  target.classList.add('flash')
  setTimeout(() => target.classList.remove('flash'), 1500)
  return true
}

export function CardView() {
  const chosen = useStore(dialect)
  const state = useStore(load)
  const [shown, setShown] = useState<Dialect>(chosen)
  const [served, setServed] = useState<{ dialect: Dialect; card: Record<string, unknown> }>()
  // A finding's field, focused once the platform card it is about is on the page.
  const [pending, setPending] = useState<string>()
  // Fetched again after each load: a save may have changed the card.
  useEffect(() => {
    let current = true
    void fetchCard(shown).then((got) => current && setServed({ dialect: shown, card: got }))
    return () => {
      current = false
    }
  }, [shown, state?.at])
  const card = served?.dialect === shown ? served.card : undefined
  useEffect(() => {
    if (pending && card && shown === 'platform' && focusField(pending)) setPending(undefined)
  }, [pending, card, shown])
  const findings = state?.findings ?? []
  return (
    <section class="card-view" aria-labelledby="card-title">
      <h2 id="card-title">Agent Card</h2>
      <fieldset class="segmented">
        <legend>Served to</legend>
        {CARD_DIALECTS.map((d) => (
          <label key={d.id}>
            <input type="radio" name="card-dialect" checked={shown === d.id} onChange={() => setShown(d.id)} />{' '}
            {d.label}
          </label>
        ))}
      </fieldset>
      <div class="card-columns">
        <div>
          <h3>As served</h3>
          {card && 'error' in card ? (
            <p class="error">{String(card.error)}</p>
          ) : card ? (
            <JsonTree value={card} anchorPrefix={shown === 'platform' ? ANCHOR : undefined} />
          ) : (
            <p class="muted">Loading…</p>
          )}
        </div>
        <div>
          <h3>
            Checks ({findings.length === 0 ? 'all pass' : `${findings.length} finding${findings.length > 1 ? 's' : ''}`}
            )
          </h3>
          <p class="muted">
            What <code>a2a card validate</code> says of this card.
          </p>
          {findings.length > 0 && (
            <ul class="findings" aria-label="Card findings">
              {findings.map((finding, i) => (
                <li key={i} class="finding" data-level={finding.level}>
                  <span class="level">{finding.level}</span>{' '}
                  <a
                    href={`#${ANCHOR}${finding.path}`}
                    onClick={(event) => {
                      event.preventDefault()
                      setShown('platform')
                      setPending(finding.path)
                    }}
                  >
                    {finding.path}
                  </a>
                  : {finding.message}. <span class="hint">{finding.hint}</span>
                </li>
              ))}
            </ul>
          )}
        </div>
      </div>
    </section>
  )
}
