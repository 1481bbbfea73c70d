import { type Credential, card, credential } from '../state'
import { useStore } from '../store'

/**
 * The credential for an agent whose card declares authentication: sent with every call the page makes, and with
 * the dev server's task feed, which lists that credential's tasks. A JWT (`oidc`) is sent as a bearer token.
 */
export function Credentials() {
  const served = useStore(card)
  const given = useStore(credential)
  const declared = (served?.authentication as { schemes?: string[] } | undefined)?.schemes ?? []
  const bearerLabel = declared.includes('oidc')
    ? declared.includes('bearer')
      ? 'Bearer token or JWT'
      : 'Bearer token (JWT)'
    : 'Bearer token'
  const labels: Record<Credential['scheme'], string> = { bearer: bearerLabel, apiKey: 'API key' }
  const schemes = (['bearer', 'apiKey'] as const).filter((scheme) =>
    scheme === 'bearer' ? declared.includes('bearer') || declared.includes('oidc') : declared.includes(scheme),
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
                {labels[known]}
              </option>
            ))}
          </select>
        </label>
      )}
      <label>
        {labels[scheme]}{' '}
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
