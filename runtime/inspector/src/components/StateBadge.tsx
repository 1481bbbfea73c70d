/** A task's state as a labelled badge, coloured by what it means. */
export function StateBadge({ state }: { state: string }) {
  return (
    <span class="state" data-state={state}>
      {state}
    </span>
  )
}
