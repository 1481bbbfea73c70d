import { v1Binding } from '../bindings/_v1.js'
import type { Binding, MethodHandler } from '../bindings/shared/_binding.js'
import type { SlashDialect } from '../http/_dialect-router.js'
import { DialectRouter } from '../http/_dialect-router.js'
import { refuseOtherTenant } from './_tenant-check.js'

/**
 * The JSON-RPC router of one agent of several: v1.0 requests carry a `tenant` (A2A v1.0 gives every request one, and
 * the agent's card names its own), so a request whose tenant names another agent is refused, naming `params.tenant`,
 * rather than answered by this agent as if it were that one. No tenant, or the agent's own, is this agent's request.
 * The other dialects have no tenant.
 */
export class TenantRouter extends DialectRouter {
  readonly #v1: Binding

  constructor(dialect: SlashDialect, tenant: string) {
    super(dialect)
    const checked = (method: MethodHandler): MethodHandler => {
      return (params, context) => {
        refuseOtherTenant(params, tenant, 'params.tenant')
        return method(params, context)
      }
    }
    const methods = new Map([...v1Binding.methods].map(([name, method]) => [name, checked(method)]))
    this.#v1 = { name: v1Binding.name, methods, wireError: (error) => v1Binding.wireError(error) }
  }

  override bindingFor(method: string, version: string | null): Binding {
    const binding = super.bindingFor(method, version)
    return binding === v1Binding ? this.#v1 : binding
  }

  /** As `DialectRouter`'s (the v1.0 binding itself: an error before the call is read has no params to check). */
  override dialectOf(body: unknown, version: string | null): Binding {
    const binding = super.dialectOf(body, version)
    return binding === this.#v1 ? v1Binding : binding
  }
}
