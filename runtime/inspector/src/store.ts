import { useEffect, useState } from 'preact/hooks'

/** A value the page's views share: set it, and every view that reads it renders again. */
export class Store<T> {
  #value: T
  readonly #listeners = new Set<() => void>()

  constructor(value: T) {
    this.#value = value
  }

  get value(): T {
    return this.#value
  }

  set(value: T): void {
    this.#value = value
    for (const listener of this.#listeners) listener()
  }

  update(change: (value: T) => T): void {
    this.set(change(this.#value))
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }
}

/** The store's value, rendering the view again when it changes. */
export function useStore<T>(store: Store<T>): T {
  const [, rerender] = useState(0)
  const seen = store.value
  useEffect(() => {
    const unsubscribe = store.subscribe(() => rerender((n) => n + 1))
    // A change between this render and the subscription would otherwise wait for the next one.
    if (store.value !== seen) rerender((n) => n + 1)
    return unsubscribe
  }, [store])
  return seen
}
