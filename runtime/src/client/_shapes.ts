/**
 * The protocol's shapes checked as far as a caller reads them, so an answer outside them fails here, naming the field,
 * instead of inside whatever prints or saves it: every list a list, every message, part, artifact and status an
 * object, every id and piece of text a string. ProtoJSON leaves out an empty list, an empty string and an unset
 * message, so an absent field passes, except the ids a task and an artifact cannot be without; a list or a message
 * may also be null (ProtoJSON's other way of saying unset), a piece of text may not (what reads it would take it as
 * text).
 */

/** Where the answer left the protocol's shape: the field's path, and what it is instead. */
export class ShapeError extends Error {}

type Check = (value: unknown, at: string) => void

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const kindOf = (value: unknown) =>
  value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : typeof value

const wrong = (at: string, wanted: string, value: unknown) =>
  new ShapeError(`\`${at}\` is ${kindOf(value)}, not ${wanted}`)

function object(value: unknown, at: string): Record<string, unknown> {
  if (!isObject(value)) throw wrong(at, 'an object', value)
  return value
}

/** The fields that must be text when present (`required`: present too). */
function strings(
  value: Record<string, unknown>,
  at: string,
  fields: readonly string[],
  required: readonly string[] = [],
) {
  for (const field of fields) {
    const item = value[field]
    if (item === undefined && !required.includes(field)) continue
    if (typeof item !== 'string') throw wrong(`${at}.${field}`, 'text', item)
  }
}

/** A list whose items each pass `check`, or nothing. */
function list(value: unknown, at: string, check: Check) {
  if (value === undefined || value === null) return
  if (!Array.isArray(value)) throw wrong(at, 'a list', value)
  for (const [index, item] of value.entries()) check(item, `${at}[${index}]`)
}

/** `check` on a field that may be absent. */
const optional = (value: unknown, at: string, check: Check) => value === undefined || value === null || check(value, at)

const part: Check = (value, at) => {
  strings(object(value, at), at, ['text', 'raw', 'url', 'filename', 'mediaType'])
}

const message: Check = (value, at) => {
  const checked = object(value, at)
  strings(checked, at, ['messageId', 'contextId', 'taskId', 'role'])
  list(checked.parts, `${at}.parts`, part)
}

const status: Check = (value, at) => {
  const checked = object(value, at)
  strings(checked, at, ['state', 'timestamp'])
  optional(checked.message, `${at}.message`, message)
}

const artifact: Check = (value, at) => {
  const checked = object(value, at)
  strings(checked, at, ['artifactId', 'name', 'description'], ['artifactId'])
  list(checked.parts, `${at}.parts`, part)
}

const task: Check = (value, at) => {
  const checked = object(value, at)
  strings(checked, at, ['id', 'contextId'], ['id'])
  optional(checked.status, `${at}.status`, status)
  list(checked.artifacts, `${at}.artifacts`, artifact)
  list(checked.history, `${at}.history`, message)
}

const statusUpdate: Check = (value, at) => {
  const checked = object(value, at)
  strings(checked, at, ['taskId', 'contextId'])
  optional(checked.status, `${at}.status`, status)
}

const artifactUpdate: Check = (value, at) => {
  const checked = object(value, at)
  strings(checked, at, ['taskId', 'contextId'])
  artifact(checked.artifact, `${at}.artifact`)
}

const pushConfig: Check = (value, at) => {
  const checked = object(value, at)
  strings(checked, at, ['id', 'taskId', 'url', 'token'])
  optional(checked.authentication, `${at}.authentication`, (auth, where) =>
    strings(object(auth, where), where, ['scheme', 'credentials']),
  )
}

/** The shapes of what each operation answers, by the protocol's name for it. */
const SHAPES = {
  Task: task,
  Message: message,
  /** SendMessage's answer: exactly one of `task` and `message`. */
  SendMessageResponse: (value: unknown, at: string) => oneOf(value, at, { task, message }),
  /** A stream's event: exactly one of its four fields. */
  StreamResponse: (value: unknown, at: string) => oneOf(value, at, { task, message, statusUpdate, artifactUpdate }),
  ListTasksResponse: (value: unknown, at: string) => {
    const checked = object(value, at)
    list(checked.tasks, `${at}.tasks`, task)
    strings(checked, at, ['nextPageToken'])
  },
  TaskPushNotificationConfig: pushConfig,
  ListTaskPushNotificationConfigsResponse: (value: unknown, at: string) => {
    const checked = object(value, at)
    list(checked.configs, `${at}.configs`, pushConfig)
    strings(checked, at, ['nextPageToken'])
  },
} satisfies Record<string, Check>

function oneOf(value: unknown, at: string, fields: Record<string, Check>) {
  const checked = object(value, at)
  const set = Object.keys(fields).filter((field) => checked[field] !== undefined && checked[field] !== null)
  if (set.length !== 1)
    throw new ShapeError(
      set.length === 0
        ? `${at} has none of ${Object.keys(fields).join(', ')}`
        : `${at} has ${set.join(' and ')}, where one is allowed`,
    )
  const field = set[0]!
  fields[field]!(checked[field], `${at}.${field}`)
}

export type ShapeName = keyof typeof SHAPES

/** `value` checked as `shape`: the first field outside it as a ShapeError naming it. */
export function checkShape(shape: ShapeName, value: unknown): void {
  SHAPES[shape](value, shape)
}
