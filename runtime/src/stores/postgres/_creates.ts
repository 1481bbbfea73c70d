import { ServerUnavailableError } from '../../errors.js'
import { booleanArray, joinedJson, numberArray } from './_parameters.js'

/** One new task as a2a_create_many writes it: its row as of its last event, its history, its first events. */
export interface NewTaskRow {
  id: string
  contextId: string
  owner: string | null
  state: string
  settled: boolean
  statusMs: number
  json: string
  head: string
  /** Its history, each message as JSON. */
  messages: string[]
  /** Its first events as JSON that its log keeps, numbered up to `lastSeq` (none: as created, or ended at once). */
  events: string[]
  /** The number of its last event (0: none yet). */
  lastSeq: number
  /** The last of them ends the task: the statement frees its lease. */
  frees: boolean
}

interface Waiting {
  /** Called when the statement is made: the row as the task stands then (the events its agent handed meanwhile). */
  row: () => NewTaskRow
  resolve: (answer: number) => void
  reject: (error: unknown) => void
}

/** Bounds of one statement: a backlog after an outage must not make one that runs past the statement timeout. */
const MAX_TASKS = 64
const MAX_BYTES = 4 * 1024 * 1024

/**
 * The creates of new tasks an instance makes in the same turn of the event loop, written together: each waits a
 * turn (its agent's first events join it, see the store's `#createWith`), and the creates of concurrent sends go in
 * one statement and one commit (a2a_create_many): what a commit and a call cost PostgreSQL is shared.
 */
export class CreateBatches {
  #waiting: Waiting[] = []
  readonly #write: (values: unknown[]) => Promise<number[]>
  readonly #instanceId: string
  readonly #leaseMs: () => number

  /** `write` runs a2a_create_many with the values given and answers its array. */
  constructor(write: (values: unknown[]) => Promise<number[]>, instanceId: string, leaseMs: () => number) {
    this.#write = write
    this.#instanceId = instanceId
    this.#leaseMs = leaseMs
  }

  /** Writes the task a turn from now, with the others of that turn: a2a_create_many's answer for it. */
  add(row: () => NewTaskRow): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ row, resolve, reject })
      if (this.#waiting.length === 1) setImmediate(() => this.#flush())
    })
  }

  #flush(): void {
    const waiting = this.#waiting
    this.#waiting = []
    // A task is never twice in one statement: the store queues a task's writes, a second create after the first.
    let statement: Array<{ waiting: Waiting; row: NewTaskRow }> = []
    let bytes = 0
    for (const one of waiting) {
      let row: NewTaskRow
      try {
        row = one.row()
      } catch (error) {
        one.reject(error)
        continue
      }
      const size = rowBytes(row)
      if (statement.length > 0 && (statement.length >= MAX_TASKS || bytes + size > MAX_BYTES)) {
        void this.#run(statement)
        statement = []
        bytes = 0
      }
      statement.push({ waiting: one, row })
      bytes += size
    }
    if (statement.length > 0) void this.#run(statement)
  }

  async #run(statement: Array<{ waiting: Waiting; row: NewTaskRow }>): Promise<void> {
    let answers: number[]
    try {
      answers = await this.#write(this.#values(statement.map((one) => one.row)))
    } catch (error) {
      // PostgreSQL refused a row rather than being out of reach: each task alone, so that only its own create fails.
      if (statement.length > 1 && !(error instanceof ServerUnavailableError))
        for (const one of statement) void this.#run([one])
      else for (const { waiting } of statement) waiting.reject(error)
      return
    }
    for (const [i, { waiting }] of statement.entries()) waiting.resolve(answers[i]!)
  }

  /** a2a_create_many's arguments for `rows`. */
  #values(rows: NewTaskRow[]): unknown[] {
    const messageTasks: number[] = []
    const messageNs: number[] = []
    const messages: string[] = []
    const eventTasks: number[] = []
    const eventSeqs: number[] = []
    const events: string[] = []
    for (const [i, row] of rows.entries()) {
      for (const [n, message] of row.messages.entries()) {
        messageTasks.push(i + 1)
        messageNs.push(n)
        messages.push(message)
      }
      const firstSeq = row.lastSeq - row.events.length + 1
      for (const [n, event] of row.events.entries()) {
        eventTasks.push(i + 1)
        eventSeqs.push(firstSeq + n)
        events.push(event)
      }
    }
    return [
      rows.map((row) => row.id),
      rows.map((row) => row.contextId),
      rows.map((row) => row.owner),
      rows.map((row) => row.state),
      booleanArray(rows.map((row) => row.settled)),
      numberArray(rows.map((row) => row.statusMs)),
      joinedJson(rows.map((row) => row.json)),
      joinedJson(rows.map((row) => row.head)),
      numberArray(rows.map((row) => row.lastSeq)),
      booleanArray(rows.map((row) => row.frees)),
      this.#instanceId,
      this.#leaseMs(),
      numberArray(messageTasks),
      numberArray(messageNs),
      joinedJson(messages),
      numberArray(eventTasks),
      numberArray(eventSeqs),
      joinedJson(events),
    ]
  }
}

/** About what a row sends, by its text's length (a bound, not a measure). */
function rowBytes(row: NewTaskRow): number {
  let bytes = row.json.length + row.head.length
  for (const message of row.messages) bytes += message.length
  for (const event of row.events) bytes += event.length
  return bytes
}
