import { connected, load, reloads } from '../state'
import { useStore } from '../store'

/** How the agent's code stands: a failure to load (file, line, cause) until a good save, or the last reload's time. */
export function LoadBanner() {
  const state = useStore(load)
  const reloaded = useStore(reloads)
  const online = useStore(connected)
  const failure = state?.failure
  return (
    <div class="banners">
      <div role="status">
        {online === 'lost' && <div class="banner warn">Not connected to the dev server; retrying…</div>}
      </div>
      <div role="alert">
        {failure && (
          <div class="banner error" data-testid="load-failure">
            <strong>The agent does not load.</strong>{' '}
            {failure.file ? (
              <>
                <code class="location">
                  {failure.file}:{failure.line}:{failure.column}
                </code>{' '}
                {failure.cause}
              </>
            ) : (
              failure.cause
            )}
            <span class="muted"> Fix it and save: the page follows.</span>
          </div>
        )}
      </div>
      <div role="status">
        {!failure && state && reloaded > 0 && (
          <div class="banner ok" data-testid="reloaded">
            Reloaded in {state.ms} ms{state.files.length ? ` (${state.files.join(', ')})` : ''}
          </div>
        )}
      </div>
    </div>
  )
}
