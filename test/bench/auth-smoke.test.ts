import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

/**
 * `node bench/auth.mjs --smoke` as a process, on this clone's build: the echo agent unauthenticated, with listed API
 * keys and with JWTs of a local OpenID Connect issuer. The script itself fails when an authenticated agent lets a
 * request without a credential (or with a wrong one) through, or when any answer under load is refused or wrong;
 * here every scenario has its row, each figure a number.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const scenarios = [
  'none',
  'none, another process',
  'API key (4 listed)',
  'JWT RS256, cached',
  'JWT RS256, each token new',
  'JWT ES256, each token new',
]

/** "12,345", "0.42", "1.013x (0.98–1.04)" → the number at the start of the cell. */
const figure = (cell: string) => Number(/^-?[\d,]+(\.\d+)?/.exec(cell)?.[0].replaceAll(',', '') ?? NaN)

// About 30 s on a quiet 2-core machine (three agents started, 2,064 tokens minted, each scenario briefly twice).
it('measures every identity scenario (--smoke) and reports a number in every cell', { timeout: 240_000 }, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [join(repoRoot, 'bench/auth.mjs'), '--smoke'], {
    cwd: repoRoot,
    timeout: 230_000,
  })
  // The table's lines but its separator (which starts with '|-').
  const lines = stdout.split('\n').filter((line) => line.startsWith('| '))
  const header = lines[0]!.split('|').map((cell) => cell.trim())
  const rows = lines.slice(1).map((line) => line.split('|').map((cell) => cell.trim()))
  expect(rows.map((row) => row[1])).toEqual(scenarios)
  for (const row of rows) {
    header.forEach((column, i) => {
      if (i < 2 || column === '') return
      // The unauthenticated row is what the others are compared with: its comparison cells stay empty.
      if (row[1] === 'none' && row[i] === '') return
      expect(Number.isFinite(figure(row[i] ?? '')), `${row[1]}: ${column} = ${row[i]}`).toBe(true)
    })
  }
  expect(stdout).toMatch(/The first JWT after start \(discovery and keys fetched, then verified\): [\d.]+ ms/)
})
