// A task takes several timestamps per turn, and formatting a date (`toISOString`) costs about a microsecond on a
// slow machine, as much as a few per cent of a whole message/send. Within one second only the milliseconds change:
// the text up to them is formatted once per second, the milliseconds come from a table, and the result is kept
// for the rest of its millisecond.

/** `000Z` … `999Z`: the end of a timestamp for each millisecond. */
const MILLISECONDS = Array.from({ length: 1000 }, (_, ms) => `${String(ms).padStart(3, '0')}Z`)

let secondStart = Number.NaN
/** `YYYY-MM-DDTHH:mm:ss.` of the second starting at `secondStart`. */
let secondText = ''
let lastMs = Number.NaN
let lastIso = ''

/** The current time as an ISO 8601 string, exactly as `Date.prototype.toISOString` writes it. */
export function isoNow(): string {
  const now = Date.now()
  if (now !== lastMs) {
    lastMs = now
    const ms = now % 1000
    if (now - ms !== secondStart) {
      secondStart = now - ms
      secondText = new Date(secondStart).toISOString().slice(0, 20)
    }
    lastIso = secondText + MILLISECONDS[ms]
  }
  return lastIso
}
