import { type Credential, card, credential } from '../state'
import { useStore } from '../store'

const LABELS: Record<Credential['scheme'], string> = { bearer: 'Bearer token', apiKey: 'API key' }

/** The credential for an agent whose card declares authentication: sent with every call the page makes. */
export function Credentials() {
  const served = useStore(card)
  const given = useStore(credential)
  const schemes = ((served?.authentication as { schemes?: string[] } | undefined)?.schemes ?? []).filter(
    (scheme): scheme is Credential['scheme'] => scheme === 'bearer' || scheme === 'apiKey',
  )
  if (!schemes.length) return null
  const scheme = given && schemes.includes(given.scheme) ? given.scheme : schemes[0]!
  return (
    <div class="credentials">
      {schemes.length > 1 && (
        <label>
          Scheme{' '}
          <select
            value={scheme}
            onChange={(event) =>
              credential.set({ scheme: event.currentTarget.value as Credential['scheme'], value: given?.value ?? '' })
            }
          >
            {schemes.map((known) => (
              <option key={known} value={known}>
                {LABELS[known]}
              </option>
            ))}
          </select>
        </label>
      )}
      <label>
        {LABELS[scheme]}{' '}
        <input
          type="password"
          autoComplete="off"
          value={given?.value ?? ''}
          placeholder="the agent asks for one"
          onInput={(event) => credential.set({ scheme, value: event.currentTarget.value })}
        />
      </label>
    </div>
  )
}
