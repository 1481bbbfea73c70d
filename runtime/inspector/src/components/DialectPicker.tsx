import { DIALECTS, type Dialect } from '../model'
import { dialect, restAddress } from '../state'
import { useStore } from '../store'

/** The select's title: the explanation in a line, for a pointer resting on it (REST's when it is offered). */
const IN_A_LINE =
  "Platform: this runtime's own JSON-RPC methods. A2A v1.0 and A2A v0.3: the official A2A protocol versions."
const REST_IN_A_LINE = ' A2A v1.0 REST: v1.0 over HTTP+JSON.'

/**
 * Which wire the page speaks, with what each is said beside it (a summary to open, and the select's description).
 * REST is offered when the agent's card lists an HTTP+JSON interface (or is chosen already, until the card is read).
 */
export function DialectPicker() {
  const chosen = useStore(dialect)
  const rest = useStore(restAddress)
  const offered = DIALECTS.filter((d) => d.id !== 'a2a-1.0-rest' || rest !== undefined || chosen === d.id)
  return (
    <div class="dialect">
      <label for="dialect">Dialect</label>
      <select
        id="dialect"
        value={chosen}
        title={rest === undefined ? IN_A_LINE : IN_A_LINE + REST_IN_A_LINE}
        aria-describedby="dialect-help"
        onChange={(event) => dialect.set(event.currentTarget.value as Dialect)}
      >
        {offered.map((d) => (
          <option key={d.id} value={d.id}>
            {d.label}
          </option>
        ))}
      </select>
      <details class="dialect-help">
        <summary>What do these mean?</summary>
        <div id="dialect-help">
          <p>
            <strong>Platform:</strong> this runtime's own JSON-RPC methods (<code>message/send</code>,{' '}
            <code>message/stream</code>, <code>tasks/get</code>, <code>tasks/cancel</code>; streamed updates as{' '}
            <code>tasks/statusUpdate</code> and <code>tasks/artifactUpdate</code> notifications).
          </p>
          <p>
            <strong>A2A v1.0</strong> and <strong>A2A v0.3:</strong> the official A2A protocol versions (v1.0's{' '}
            <code>SendMessage</code>, <code>GetTask</code>…; v0.3's <code>message/send</code>…), picked by the{' '}
            <code>A2A-Version</code> header.
          </p>
          <p>The agent answers these three in JSON-RPC on the same endpoint; the page sends in the one chosen.</p>
          {rest !== undefined && (
            <p>
              <strong>A2A v1.0 REST:</strong> the same v1.0 operations over HTTP+JSON, each at its own path (
              <code>POST /message:stream</code>, <code>GET /tasks/{'{id}'}</code>…), errors as HTTP statuses with a{' '}
              <code>google.rpc.Status</code> body; offered because the card lists this interface.
            </p>
          )}
        </div>
      </details>
    </div>
  )
}
