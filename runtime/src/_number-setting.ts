/**
 * A number set by an option or by its environment variable: the option wins; a blank variable counts as unset.
 * Every numeric setting of the runtime is read this way, each checking its own range.
 */
export function numberSetting(option: number | undefined, env: string): number | undefined {
  if (option !== undefined) return option
  const raw = process.env[env]
  return raw === undefined || raw.trim() === '' ? undefined : Number(raw)
}

/** What the user gave for a setting, as an error message quotes it: the option's value, or the variable's text. */
export function givenSetting(option: number | undefined, env: string): string {
  return option !== undefined ? String(option) : JSON.stringify(process.env[env])
}
