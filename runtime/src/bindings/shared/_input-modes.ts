import type { CardTemplate } from '../../core/_card.js'
import { A2AError, ErrorCode, InvalidParamsError } from '../../errors.js'
import type { Message, Part } from '../../types.js'

/**
 * The media types an agent takes in a message: its card's `defaultInputModes` and every skill's `inputModes`
 * (a message names no skill, so any of them). Built once per card; a message's check is a set lookup per part.
 * A part's type is its `mediaType` when it gives one, else its file's `mimeType`, else what its kind is:
 * `text/plain` for text, `application/json` for data; a file that names no type is not judged.
 */
export class InputModes {
  /** Types taken as they are, lower-cased without parameters (`image/png`). */
  readonly #exact = new Set<string>()
  /** Top-level types taken whole (`image/*` → `image`). */
  readonly #wholeTypes = new Set<string>()
  readonly #any: boolean
  /** The common case, decided once: a text part with no media type. */
  readonly #plainText: boolean
  /** The list a refusal names. */
  readonly #named: string

  constructor(modes: Iterable<string>) {
    const named: string[] = []
    for (const mode of modes) {
      const type = essence(mode)
      if (named.includes(type)) continue
      named.push(type)
      if (type.endsWith('/*')) this.#wholeTypes.add(type.slice(0, -2))
      else this.#exact.add(type)
    }
    this.#any = this.#wholeTypes.has('*')
    this.#named = named.join(', ')
    this.#plainText = this.#takes('text/plain')
  }

  static of(card: Pick<CardTemplate, 'defaultInputModes' | 'skills'>): InputModes {
    return new InputModes([...card.defaultInputModes, ...card.skills.flatMap((skill) => skill.inputModes ?? [])])
  }

  /**
   * Refuses a message with a part of a type the agent does not take, naming the part and the types it takes:
   * A2A v1.0's ContentTypeNotSupported (-32005), or Invalid params (-32602) in the dialects without that code.
   */
  check(message: Message, v1: boolean, field = 'params.message'): void {
    if (this.#any) return
    const parts = message.parts
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      if (part.kind === 'text' && this.#plainText && part.mediaType === undefined) continue
      const type = typeOf(part)
      if (type === undefined || this.#takes(type)) continue
      const problem = `\`${field}.parts[${i}]\` is ${type}, which this agent does not take (it takes ${this.#named})`
      throw v1 ? new A2AError(ErrorCode.ContentTypeNotSupported, problem) : new InvalidParamsError(problem)
    }
  }

  #takes(type: string): boolean {
    if (this.#exact.has(type)) return true
    const slash = type.indexOf('/')
    return slash > 0 && this.#wholeTypes.has(type.slice(0, slash))
  }
}

/** `Text/HTML; charset=utf-8` → `text/html`. */
function essence(mode: string): string {
  const semicolon = mode.indexOf(';')
  return (semicolon === -1 ? mode : mode.slice(0, semicolon)).trim().toLowerCase()
}

function typeOf(part: Part): string | undefined {
  if (part.kind === 'file') return part.file.mimeType ? essence(part.file.mimeType) : undefined
  if (part.mediaType) return essence(part.mediaType)
  return part.kind === 'text' ? 'text/plain' : 'application/json'
}
