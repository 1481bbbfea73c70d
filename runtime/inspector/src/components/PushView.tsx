import { authHeaders } from '../auth-headers'
import { AGENT_BASE } from '../base'
import { deliveries, pushUrl, refusedDeliveries } from '../state'
import { useStore } from '../store'
import { JsonTree } from './JsonTree'

export function PushView() {
  const received = useStore(deliveries)
  const receiver = useStore(pushUrl)
  const refused = useStore(refusedDeliveries)
  return (
    <section class="push-view" aria-labelledby="push-title">
      <h2 id="push-title">Push notifications</h2>
      <p>
        The dev server receives webhooks at <code>{receiver}</code>. Tick “Push notifications to the inspector” in the
        chat, or give that URL to any client as a task's push config; what the agent sends shows here.
      </p>
      <button
        type="button"
        onClick={() => {
          void fetch(`${AGENT_BASE}__a2a/api/push`, { method: 'DELETE', headers: authHeaders() }).then(() =>
            deliveries.set([]),
          )
        }}
        disabled={!received.length}
      >
        Clear
      </button>
      {refused > 0 && (
        <p class="error" role="status">
          {refused} deliver{refused === 1 ? 'y was' : 'ies were'} refused for being over 256 KiB (answered 413).
        </p>
      )}
      {received.length === 0 ? (
        <p class="muted">No deliveries yet.</p>
      ) : (
        <ol class="deliveries" aria-label="Deliveries, newest first">
          {[...received].reverse().map((delivery) => (
            <li key={delivery.id} class="delivery">
              <h3>
                #{delivery.id} at {new Date(delivery.at).toLocaleTimeString()} to <code>{delivery.path}</code> (
                {delivery.bytes} bytes)
              </h3>
              <table>
                <caption class="visually-hidden">Headers</caption>
                <tbody>
                  {Object.entries(delivery.headers).map(([name, value]) => (
                    <tr key={name}>
                      <th scope="row">{name}</th>
                      <td>
                        <code>{value}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <JsonTree value={delivery.body} />
            </li>
          ))}
        </ol>
      )}
    </section>
  )
}
