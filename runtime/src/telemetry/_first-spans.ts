/**
 * The span that started each task, by task id, so a follow-up message's span links to the trace its task began in.
 * A budget like every buffer of the runtime: at most `max` tasks, the oldest forgotten first (a follow-up to one
 * forgotten simply has no link). Each entry is a span context: two ids and a few fields.
 */
export class FirstSpans<T> {
  readonly #spans = new Map<string, T>()

  constructor(readonly max: number) {}

  remember(taskId: string, span: T): void {
    if (this.max === 0) return
    if (this.#spans.size >= this.max) this.#spans.delete(this.#spans.keys().next().value!)
    this.#spans.set(taskId, span)
  }

  get(taskId: string): T | undefined {
    return this.#spans.get(taskId)
  }

  /** A task that ended no longer takes follow-ups: its entry makes room at once. */
  forget(taskId: string): void {
    this.#spans.delete(taskId)
  }

  get size(): number {
    return this.#spans.size
  }
}
