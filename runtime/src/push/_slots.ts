/** A counting semaphore whose waiters give up (`take` resolves `false`) once it is closed. */
export class Slots {
  #free: number
  readonly #waiting: Array<(taken: boolean) => void> = []
  #closed = false

  constructor(readonly size: number) {
    this.#free = size
  }

  /** No slot taken and nobody waiting. */
  get idle(): boolean {
    return this.#free === this.size && this.#waiting.length === 0
  }

  take(): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false)
    if (this.#free > 0) {
      this.#free--
      return Promise.resolve(true)
    }
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  give(): void {
    const next = this.#waiting.shift()
    if (next) next(true)
    else this.#free++
  }

  close(): void {
    this.#closed = true
    for (const waiter of this.#waiting.splice(0)) waiter(false)
  }
}
