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
  useEffect(() => store.subscribe(() => rerender((n) => n + 1)), [store])
  return store.value
}
