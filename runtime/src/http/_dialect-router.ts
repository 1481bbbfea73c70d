import { isObject } from '../_is-object.js'
import { platformBinding } from '../bindings/_platform.js'
import { v1Binding, withErrorInfo } from '../bindings/_v1.js'
import { v03Binding } from '../bindings/_v03.js'
import type { Binding } from '../bindings/shared/_binding.js'
import { A2AError, ErrorCode } from '../errors.js'

/** What slash-named methods (`message/send`…) speak without an `A2A-Version` header. */
export type SlashDialect = 'platform' | 'a2a-0.3'

/** `A2A-Version` values that ask for A2A v1.0. */
export const V1_VERSION = /^1(\.0(\.\d+)?)?$/
const V03_VERSION = /^0\.3(\.\d+)?$/

const NO_VERSION = (where: string) =>
  withErrorInfo(
    new A2AError(
      ErrorCode.VersionNotSupported,
      `A2A-Version is missing, and a request without it is read as A2A 0.3 (A2A v1.0 §3.6.2); ${where} speaks 1.0: send the header A2A-Version: 1.0`,
    ),
  )

/**
 * Refuses a version other than 1.0 (its patch ignored) where only v1.0 is served (HTTP+JSON, gRPC): an absent one
 * is 0.3 by the spec, so it is refused too.
 */
export function checkV1Only(version: string | null | undefined, where: string): void {
  const requested = version?.trim()
  if (requested && V1_VERSION.test(requested)) return
  if (!requested) throw NO_VERSION(where)
  throw withErrorInfo(
    new A2AError(
      ErrorCode.VersionNotSupported,
      `A2A-Version ${JSON.stringify(requested.slice(0, 20))} is not supported on ${where}, which speaks 1.0 (A2A 0.3 is served over JSON-RPC at the address the card's url names)`,
    ),
  )
}

/**
 * Which binding answers a request. Slash-named methods speak the platform dialect, or A2A v0.3 when the agent opts
 * in (or the request says A2A-Version: 0.3); A2A v1.0 methods (and A2A-Version: 1.0) speak v1.0.
 */
export class DialectRouter {
  /** The binding of slash-named methods, and of errors sent before a request is understood. */
  readonly legacy: Binding

  constructor(dialect: SlashDialect) {
    this.legacy = dialect === 'a2a-0.3' ? v03Binding : platformBinding
  }

  bindingFor(method: string, version: string | null): Binding {
    const requested = version?.trim()
    if (!requested) return v1Binding.methods.has(method) ? v1Binding : this.legacy
    if (V1_VERSION.test(requested)) return v1Binding
    if (V03_VERSION.test(requested)) return v03Binding
    throw withErrorInfo(
      new A2AError(
        ErrorCode.VersionNotSupported,
        `A2A-Version ${JSON.stringify(requested.slice(0, 20))} is not supported; this agent speaks 1.0 and 0.3`,
      ),
    )
  }

  /** The binding a request would get, for an error sent before it is read as a call (never throws). */
  dialectOf(body: unknown, version: string | null): Binding {
    const method = isObject(body) && typeof body.method === 'string' ? body.method : ''
    try {
      return this.bindingFor(method, version)
    } catch {
      return this.legacy
    }
  }
}
