/** What the order needs of an entry: its place in it (-1 when not in it). */
export interface Placed {
  place: number
}

/** Past this many places the array is cut down: below it, compaction would cost more than it saves. */
const MIN_COMPACT = 1024

/**
 * Entries in the order they settled, oldest first: retention walks it from the front and every entry it visits
 * goes, so evicting costs O(1) per task however many tasks are running. An array with a moving head rather than
 * a Map: settling is a push, leaving the order only marks the entry, and the walk skips the places left behind
 * (each entry knows its one live place). Costs per settled task: no hashing, which matters on every message/send.
 */
export class SettledOrder<E extends Placed> {
  #places: Array<E | undefined> = []
  #head = 0
  /** The absolute number of `#places[0]`, so a place stays valid when the array is cut down. */
  #offset = 0
  #live = 0

  /** Entries in the order now. */
  get size(): number {
    return this.#live
  }

  /** `entry` settled now: it goes to the end (a place it had goes stale). */
  push(entry: E): void {
    if (entry.place >= 0) this.#live--
    entry.place = this.#offset + this.#places.length
    this.#places.push(entry)
    this.#live++
    // Stale places pile up when tasks settle again and again with nothing dropped (a long conversation in a
    // store far from its limits): rebuilt once they are most of the array, O(1) per push amortised.
    if (this.#places.length - this.#head > 2 * this.#live + MIN_COMPACT) this.#rebuild()
  }

  /** `entry` left the order: it runs again, or it was dropped. */
  remove(entry: E): void {
    if (entry.place < 0) return
    entry.place = -1
    this.#live--
  }

  /** The entry that settled longest ago, or `undefined` when none is in the order. */
  first(): E | undefined {
    const places = this.#places
    while (this.#head < places.length) {
      const entry = places[this.#head]!
      if (entry !== undefined && entry.place === this.#offset + this.#head) {
        // The front is cut off once it is most of the array (places stay valid: the offset moves with it).
        if (this.#head > MIN_COMPACT && this.#head * 2 > places.length) {
          this.#places = places.slice(this.#head)
          this.#offset += this.#head
          this.#head = 0
        }
        return entry
      }
      places[this.#head] = undefined // released now, not at the next cut
      this.#head++
    }
    // Empty: start over at the front, so the array never grows while the order stays short.
    this.#offset += places.length
    this.#places = []
    this.#head = 0
    return undefined
  }

  /** The entries in order, oldest first (a copy: the caller may remove them as it goes). */
  entries(): E[] {
    const entries: E[] = []
    for (let i = this.#head; i < this.#places.length; i++) {
      const entry = this.#places[i]
      if (entry !== undefined && entry.place === this.#offset + i) entries.push(entry)
    }
    return entries
  }

  #rebuild(): void {
    const entries = this.entries()
    this.#offset += this.#places.length
    this.#places = entries
    this.#head = 0
    for (let i = 0; i < entries.length; i++) entries[i]!.place = this.#offset + i
  }
}
