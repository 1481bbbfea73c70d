import canonicalize from 'canonicalize'
import { isObject } from './_is-object.js'

/**
 * What an Agent Card signature covers (A2A v1.0 §8.4): the card without its `signatures`, canonicalised by
 * RFC 8785 (JCS). The spec asks for protobuf field presence; the official SDKs (a2a-python, a2a-js) read it as
 * "drop empty strings, lists and objects" after a round trip through the v1.0 message, which also drops every
 * field the v1.0 schema does not know. Signing what they verify is what makes a signed card useful to their
 * clients, so the runtime signs:
 * - the v1.0 shape over its v1.0 fields (`a2a-1.0-fields`): the v0.3 addressing fields the v1.0 shape also carries
 *   (`url`, `preferredTransport`, `additionalInterfaces`) are not covered, as no v1.0 client reads them;
 * - the v0.3 shape over every field (`whole`), as the v1.0 message would drop most of it.
 */
export type Coverage = 'whole' | 'a2a-1.0-fields'

/** A field of the v1.0 schema: kept as JSON, a bool without presence (false is its default, so omitted), a message,
 * a list or a map of one. */
type Shape = 'json' | 'flag' | { fields: Record<string, Shape> } | { each: Shape } | { values: Shape }

const message = (fields: Record<string, Shape>): Shape => ({ fields })
const strings: Shape = { each: 'json' }
const SECURITY_REQUIREMENT = message({ schemes: { values: message({ list: strings }) } })
const flow = (fields: string[], extra: Record<string, Shape> = {}) =>
  message({
    ...Object.fromEntries(fields.map((field) => [field, 'json' as Shape])),
    scopes: { values: 'json' },
    ...extra,
  })

/** The A2A v1.0 `AgentCard` message (specification/a2a.proto) in its JSON names. */
const AGENT_CARD: Shape = message({
  name: 'json',
  description: 'json',
  supportedInterfaces: {
    each: message({ url: 'json', protocolBinding: 'json', tenant: 'json', protocolVersion: 'json' }),
  },
  provider: message({ url: 'json', organization: 'json' }),
  version: 'json',
  documentationUrl: 'json',
  capabilities: message({
    streaming: 'json',
    pushNotifications: 'json',
    extensions: { each: message({ uri: 'json', description: 'json', required: 'flag', params: 'json' }) },
    extendedAgentCard: 'json',
  }),
  securitySchemes: {
    values: message({
      apiKeySecurityScheme: message({ description: 'json', location: 'json', name: 'json' }),
      httpAuthSecurityScheme: message({ description: 'json', scheme: 'json', bearerFormat: 'json' }),
      oauth2SecurityScheme: message({
        description: 'json',
        flows: message({
          authorizationCode: flow(['authorizationUrl', 'tokenUrl', 'refreshUrl'], { pkceRequired: 'flag' }),
          clientCredentials: flow(['tokenUrl', 'refreshUrl']),
          implicit: flow(['authorizationUrl', 'refreshUrl']),
          password: flow(['tokenUrl', 'refreshUrl']),
          deviceCode: flow(['deviceAuthorizationUrl', 'tokenUrl', 'refreshUrl']),
        }),
        oauth2MetadataUrl: 'json',
      }),
      openIdConnectSecurityScheme: message({ description: 'json', openIdConnectUrl: 'json' }),
      mtlsSecurityScheme: message({ description: 'json' }),
    }),
  },
  securityRequirements: { each: SECURITY_REQUIREMENT },
  defaultInputModes: strings,
  defaultOutputModes: strings,
  skills: {
    each: message({
      id: 'json',
      name: 'json',
      description: 'json',
      tags: strings,
      examples: strings,
      inputModes: strings,
      outputModes: strings,
      securityRequirements: { each: SECURITY_REQUIREMENT },
    }),
  },
  iconUrl: 'json',
})

/** The value as the v1.0 message holds it, each field it has no place for named in `dropped` (by JSON path). */
function project(value: unknown, shape: Shape, path: string, dropped: string[]): unknown {
  if (shape === 'json') return value
  if (shape === 'flag') return value === false ? undefined : value
  if ('each' in shape) {
    if (!Array.isArray(value)) return dropIf(value, path, dropped)
    return value.map((item, index) => project(item, shape.each, `${path}[${index}]`, dropped))
  }
  if (!isObject(value)) return dropIf(value, path, dropped)
  // Built from entries: a parsed card's own `__proto__` key stays a key.
  const entries: Array<[string, unknown]> = []
  for (const [key, item] of Object.entries(value)) {
    const inner = 'values' in shape ? shape.values : Object.hasOwn(shape.fields, key) ? shape.fields[key] : undefined
    const at = `${path}.${key}`
    if (inner === undefined) dropIf(item, at, dropped)
    else entries.push([key, project(item, inner, at, dropped)])
  }
  return Object.fromEntries(entries)
}

function dropIf(value: unknown, path: string, dropped: string[]): undefined {
  if (clean(value) !== undefined) dropped.push(path)
  return undefined
}

/** Without empty strings, nulls, empty lists and empty objects, at any depth (what the official SDKs sign). */
function clean(value: unknown): unknown {
  if (value === '' || value === null || value === undefined) return undefined
  if (Array.isArray(value)) {
    const items = value.map(clean).filter((item) => item !== undefined)
    return items.length ? items : undefined
  }
  if (isObject(value)) {
    const entries = Object.entries(value).flatMap(([key, item]) => {
      const kept = clean(item)
      return kept === undefined ? [] : [[key, kept] as const]
    })
    return entries.length ? Object.fromEntries(entries) : undefined
  }
  return value
}

/** The card without `signatures`. */
function unsigned(card: Record<string, unknown>): Record<string, unknown> {
  const { signatures: _signatures, ...rest } = card
  return rest
}

/** The bytes a signature with this coverage signs, as text; `uncovered` lists the fields it leaves out. */
export function signedPayload(
  card: Record<string, unknown>,
  coverage: Coverage,
): { payload: string; uncovered: string[] } {
  const uncovered: string[] = []
  const content = coverage === 'whole' ? unsigned(card) : project(unsigned(card), AGENT_CARD, '$', uncovered)
  return { payload: canonicalize(clean(content) ?? {}) ?? '{}', uncovered }
}

/**
 * The spec's own reading of §8.4.1 for a card that keeps its empty required fields (`"skills": []`): the card as
 * it is, only without `signatures`. Verifiers try it after `signedPayload`.
 */
export function literalPayload(card: Record<string, unknown>): string {
  return canonicalize(unsigned(card)) ?? '{}'
}

/** Python's `json.dumps` escapes every non-ASCII character (a2a-python signs so); the same JSON value otherwise. */
export function asciiEscaped(payload: string): string {
  return payload.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
