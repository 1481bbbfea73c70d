import { DIALECTS, type Dialect } from '../model'
import { dialect } from '../state'
import { useStore } from '../store'

/** The select's title: the explanation in a line, for a pointer resting on it. */
const IN_A_LINE =
  "Platform: this runtime's own JSON-RPC methods. A2A v1.0 and A2A v0.3: the official A2A protocol versions."

/** Which wire the page speaks, with what each is said beside it (a summary to open, and the select's description). */
export function DialectPicker() {
  const chosen = useStore(dialect)
  return (
    <div class="dialect">
      <label for="dialect">Dialect</label>
      <select
        id="dialect"
        value={chosen}
        title={IN_A_LINE}
        aria-describedby="dialect-help"
        onChange={(event) => dialect.set(event.currentTarget.value as Dialect)}
      >
        {DIALECTS.map((d) => (
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
          <p>The agent answers all three on the same endpoint; the page sends in the one chosen.</p>
        </div>
      </details>
    </div>
  )
}
