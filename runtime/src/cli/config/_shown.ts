import type { ResolvedOption } from './_resolve.js'

/**
 * A configured value as `config show` and `--help` show it, in its JSON type (a switch as true or false, a repeatable
 * option as a list): a service parameter as its keys with every value `[redacted]` (one may carry a credential), any
 * other credential as `[redacted]` whole. Unset: undefined.
 */
export function shownValue(option: ResolvedOption): unknown {
  const { value } = option
  if (value === undefined || value === null || value === '') return undefined
  if (option.variable === 'A2ACLI_SVC_PARAM') {
    const redact = (item: unknown) => String(item).replace(/:.*$/s, ':[redacted]')
    return Array.isArray(value) ? value.map(redact) : redact(value)
  }
  return option.credential ? '[redacted]' : value
}
