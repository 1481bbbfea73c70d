import { InvalidParamsError } from '../errors.js'

/** Longest tenant an error repeats: the client's own text, bounded. */
export const SHOWN_TENANT = 64

/**
 * Refuses v1.0 params whose `tenant` names another agent than `tenant`, the agent the request reached: it would
 * otherwise be answered by this agent as if it were that one. No tenant, or this agent's own, passes. `field` is the
 * name the binding gives it (`params.tenant` in JSON-RPC, `tenant` in HTTP+JSON's body or query).
 */
export function refuseOtherTenant(params: unknown, tenant: string, field: string): void {
  if (typeof params !== 'object' || params === null || !('tenant' in params)) return
  const named = (params as { tenant: unknown }).tenant
  // JSON's null, as ProtoJSON reads it, is the field left unset.
  if (named === undefined || named === null || named === '' || named === tenant) return
  if (typeof named !== 'string') throw new InvalidParamsError(`\`${field}\` must be a string`)
  throw new InvalidParamsError(
    `\`${field}\` ${JSON.stringify(named.slice(0, SHOWN_TENANT))} is not this agent's: this is ${JSON.stringify(tenant)} (each agent answers at its own path, with its own tenant)`,
  )
}
