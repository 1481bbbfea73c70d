/** A JSON value as a tree of collapsible nodes; with `anchorPrefix`, each node has an id made of its path. */
export function JsonTree({ value, anchorPrefix }: { value: unknown; anchorPrefix?: string }) {
  return (
    <div class="json-tree">
      <Node value={value} path="" anchorPrefix={anchorPrefix} depth={0} />
    </div>
  )
}

const childPath = (path: string, key: string | number) =>
  typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key

function Leaf({ value }: { value: unknown }) {
  if (typeof value === 'string') return <span class="json-string">{JSON.stringify(value)}</span>
  return <span class={`json-${value === null ? 'null' : typeof value}`}>{String(value)}</span>
}

function Node({
  value,
  name,
  path,
  anchorPrefix,
  depth,
}: {
  value: unknown
  name?: string
  path: string
  anchorPrefix: string | undefined
  depth: number
}) {
  const id = anchorPrefix !== undefined && path ? `${anchorPrefix}${path}` : undefined
  const key = name !== undefined ? <span class="json-key">{name}: </span> : null
  if (typeof value !== 'object' || value === null) {
    return (
      <div class="json-leaf" id={id} tabIndex={id ? -1 : undefined}>
        {key}
        <Leaf value={value} />
      </div>
    )
  }
  const entries: Array<[string | number, unknown]> = Array.isArray(value)
    ? value.map((item, i) => [i, item])
    : Object.entries(value)
  const brackets = Array.isArray(value) ? ['[', ']'] : ['{', '}']
  if (!entries.length) {
    return (
      <div class="json-leaf" id={id} tabIndex={id ? -1 : undefined}>
        {key}
        {brackets.join('')}
      </div>
    )
  }
  return (
    <details open={depth < 3} id={id} tabIndex={id ? -1 : undefined}>
      <summary>
        {key}
        {brackets[0]}
        <span class="json-count">
          {entries.length} {Array.isArray(value) ? 'item' : 'key'}
          {entries.length === 1 ? '' : 's'}
        </span>
      </summary>
      <div class="json-children">
        {entries.map(([k, v]) => (
          <Node
            key={k}
            value={v}
            name={String(k)}
            path={childPath(path, k)}
            anchorPrefix={anchorPrefix}
            depth={depth + 1}
          />
        ))}
      </div>
      <span class="json-close">{brackets[1]}</span>
    </details>
  )
}
