// Formatting a date costs about a microsecond and a task takes several timestamps per turn; within one
// millisecond the text is the same, so it is formatted once per millisecond.
let lastMs = 0
let lastIso = ''

/** The current time as an ISO 8601 string (`Date.prototype.toISOString`). */
export function isoNow(): string {
  const now = Date.now()
  if (now !== lastMs) {
    lastMs = now
    lastIso = new Date(now).toISOString()
  }
  return lastIso
}
