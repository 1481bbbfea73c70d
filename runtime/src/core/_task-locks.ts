/** Runs work for one task at a time: resuming and canceling a task at rest never interleave. */
export class TaskLocks {
  readonly #locks = new Map<string, Promise<void>>()

  async hold<T>(taskId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(taskId)
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const mine = previous ? previous.then(() => held) : held
    this.#locks.set(taskId, mine)
    try {
      await previous
      return await work()
    } finally {
      release()
      if (this.#locks.get(taskId) === mine) this.#locks.delete(taskId)
    }
  }
}
