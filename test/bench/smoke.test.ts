import { execFile } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

/**
 * `node bench/run.mjs --smoke` as a process: generates an echo agent from this clone, runs every workload of
 * the benchmark briefly against it, the official SDK server and the node:http ceiling, then ours over each A2A v1.0
 * binding (JSON-RPC, HTTP+JSON, gRPC), then the runtime rows (an echo agent beside a raw ceiling on each JavaScript
 * runtime), and fails on a wrong answer or a missing figure. Here: every table has a row per server (per binding, per
 * runtime) whose figures are numbers. Then `node bench/dev-startup.mjs`
 * briefly: this clone's `a2a dev` timed from its spawn to the first 200 of its Agent Card.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const servers = ['ours', 'sdk', 'ceiling']
// The first cell of each runtime row starts with its name (then its version); the first is the Node running the bench.
const runtimes = ['node ', 'node 22 ', 'node 24 ', 'bun ', 'deno ', 'workerd ']
// Columns that are words by design: the row's labels, ratios for ours, what a memory figure is divided by;
// CPU shares read from /proc are "n/a" where it is missing.
const wordColumns = (header: string) =>
  ['c', 'server', 'binding', 'ours vs', 'vs JSON-RPC', 'divided by'].includes(header) || header.includes('CPU')
// The binding rows: ours over each A2A v1.0 binding, in the report's order.
const bindings = ['JSON-RPC', 'HTTP+JSON', 'gRPC']

interface Table {
  heading: string
  header: string[]
  rows: string[][]
}

/** The Markdown tables of the report, each with the `##` (or `###`) heading above it. */
function tables(markdown: string): Table[] {
  const found: Table[] = []
  let heading = ''
  let current: Table | undefined
  for (const line of markdown.split('\n')) {
    const title = /^#{2,3} (.*)/.exec(line)
    if (title) heading = title[1]!
    if (!line.startsWith('|')) {
      current = undefined
      continue
    }
    const cells = line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim())
    if (!current) {
      current = { heading, header: cells, rows: [] }
      found.push(current)
    } else if (!cells.every((cell) => /^-+$/.test(cell))) current.rows.push(cells)
  }
  return found
}

/** "12,345", "0.42", "1,002 (time-bounded)" → the number at the start of the cell. */
const figure = (cell: string) => Number(/^-?[\d,]+(\.\d+)?/.exec(cell)?.[0].replaceAll(',', '') ?? NaN)

// On a loaded 2-core machine: about 70 s for the three servers, 15 s for the binding rows (one more server, gRPC's
// packages installed in the project), 90-130 s more for the runtime rows (six pairs of servers, wrangler taking
// seconds to start each of its two Workers).
it('runs every part of the benchmark (--smoke) and reports numeric figures for all three servers and every runtime', {
  timeout: 300_000,
}, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [join(repoRoot, 'bench/run.mjs'), '--smoke'], {
    cwd: repoRoot,
    timeout: 290_000,
    maxBuffer: 16 * 1024 * 1024,
  })
  const report = /^Report: (.+\.md)$/m.exec(stdout)?.[1]
  expect(report).toBeDefined()
  const reportDir = dirname(report!)
  try {
    // A smoke report is written to a temporary directory, never among the real results.
    expect(resolve(reportDir).startsWith(resolve(tmpdir()))).toBe(true)
    expect(readFileSync(report!, 'utf8')).toBe(stdout.slice(0, stdout.indexOf('\nReport: ')))
    expect(existsSync(report!.replace(/\.md$/, '.json'))).toBe(true)

    const all = tables(stdout)
    for (const heading of ['message/send', 'message/stream', 'Agent card GET', 'Memory', 'Startup']) {
      const table = all.find((t) => t.heading.startsWith(heading))
      expect(table, heading).toBeDefined()
      const serverColumn = table!.header.indexOf('server')
      for (const server of servers) {
        const row = table!.rows.find((cells) => cells[serverColumn] === server)
        expect(row, `${heading}: a row for ${server}`).toBeDefined()
        expect(row!.join(' '), `${heading}: ${server}`).not.toContain('FAILED')
        table!.header.forEach((header, i) => {
          if (!wordColumns(header))
            expect(Number.isFinite(figure(row![i] ?? '')), `${heading}: ${server} ${header} = ${row![i]}`).toBe(true)
        })
      }
      if (heading === 'message/send' || heading === 'message/stream' || heading === 'Agent card GET') {
        const ours = table!.rows.find((cells) => cells[serverColumn] === 'ours')!
        expect(ours[table!.header.indexOf('ours vs')]).toMatch(/^\d+(\.\d+)?x SDK · \d+(\.\d+)?x ceiling$/)
      }
    }
    // The same number of events per stream from every server, so the stream row compares like with like.
    const stream = all.find((t) => t.heading.startsWith('message/stream'))!
    const events = stream.rows.map((cells) => cells[stream.header.indexOf('events/stream')])
    expect(new Set(events).size).toBe(1)

    // Each binding: its send and its streaming send measured, every figure a number, the ratio to JSON-RPC's for the
    // others, and the same events per stream over each.
    expect(stdout).toContain('## Bindings (ours, A2A v1.0)')
    for (const heading of ['SendMessage', 'SendStreamingMessage']) {
      const table = all.find((t) => t.heading.startsWith(`${heading} (`))
      expect(table, heading).toBeDefined()
      expect(table!.rows.map((row) => row[0])).toEqual(bindings)
      for (const row of table!.rows) {
        expect(row.join(' '), `${heading}: ${row[0]}`).not.toContain('FAILED')
        table!.header.forEach((header, i) => {
          if (!wordColumns(header))
            expect(Number.isFinite(figure(row[i] ?? '')), `${heading}: ${row[0]} ${header} = ${row[i]}`).toBe(true)
        })
        const ratio = row[table!.header.indexOf('vs JSON-RPC')]
        expect(ratio, `${heading}: ${row[0]} vs JSON-RPC`).toMatch(row[0] === 'JSON-RPC' ? /^$/ : /^\d+\.\d+x$/)
      }
      if (heading === 'SendStreamingMessage')
        expect(new Set(table!.rows.map((row) => row[table!.header.indexOf('events/stream')])).size).toBe(1)
    }

    // Start-up per runtime: a2a start on each Node, serveAgent on each runtime but workerd, the h3 + srvx floor on
    // each Node, bare node:http; all figures numbers.
    const startupTable = all.find((t) => t.heading.startsWith('Start-up per runtime'))
    expect(startupTable?.rows.map((row) => row[0])).toEqual([
      ...['node ', 'node 22', 'node 24'].map((node) => expect.stringMatching(new RegExp(`^a2a start \\(${node}`))),
      ...runtimes.slice(0, -1).map((runtime) => expect.stringMatching(new RegExp(`^serveAgent \\(${runtime.trim()}`))),
      ...['node ', 'node 22', 'node 24'].map((node) =>
        expect.stringMatching(new RegExp(`^h3 \\+ srvx floor \\(${node}`)),
      ),
      'bare node:http',
    ])
    for (const row of startupTable!.rows) {
      startupTable!.header.forEach((header, i) => {
        if (!wordColumns(header)) expect(Number.isFinite(figure(row[i] ?? '')), `${row[0]} ${header}`).toBe(true)
      })
    }

    // Each runtime: its agent beside its ceiling, both rows measured, the ratios numbers too.
    const runtimeTable = all.find((t) => t.heading.startsWith('Runtimes'))
    expect(runtimeTable, 'Runtimes').toBeDefined()
    expect(runtimeTable!.rows).toHaveLength(runtimes.length)
    runtimes.forEach((runtime, i) => {
      const row = runtimeTable!.rows[i]!
      expect(row[0], 'the runtime rows in order').toMatch(new RegExp(`^${runtime}`))
      expect(row.join(' '), `Runtimes: ${runtime}`).not.toContain('FAILED')
      runtimeTable!.header.forEach((header, column) => {
        if (column > 0 && !wordColumns(header))
          expect(Number.isFinite(figure(row[column] ?? '')), `Runtimes: ${row[0]} ${header} = ${row[column]}`).toBe(
            true,
          )
      })
    })

    // Each framework adapter against a hand-written execute streaming the same chunks: both figures and the ratio.
    const adapterTable = all.find((t) => t.heading.startsWith('Framework adapters'))
    expect(adapterTable, 'Framework adapters').toBeDefined()
    expect(adapterTable!.rows.map((row) => row[0])).toEqual(['ai-sdk', 'mastra', 'langgraph'])
    for (const row of adapterTable!.rows) {
      for (const header of ['hand-written µs/chunk', 'adapter µs/chunk', 'adapter/hand-written']) {
        expect(
          Number.isFinite(figure(row[adapterTable!.header.indexOf(header)] ?? '')),
          `Framework adapters: ${row[0]} ${header}`,
        ).toBe(true)
      }
    }

    // The eight targets of the servers, four of the bindings (HTTP+JSON's and gRPC's send and streaming send within
    // 10% of JSON-RPC's), then one per framework adapter.
    const targets = all.find((t) => t.heading.startsWith('Targets'))
    expect(targets?.rows).toHaveLength(15)
    expect(targets!.rows.filter((row) => /of JSON-RPC's throughput$/.test(row[0]!))).toHaveLength(4)
    for (const row of targets!.rows) expect(row[2]).toMatch(/^(yes|\*\*no\*\*)$/)
  } finally {
    rmSync(reportDir, { recursive: true, force: true })
  }
})

// Two warm-up starts and two counted ones of this clone's `a2a dev` (this clone's build alone): a few seconds, well
// under the script's own bound of 60 s per start.
it('times `a2a dev` to its first Agent Card (dev-startup.mjs --rounds 2 --json) and reports a positive median', {
  timeout: 150_000,
}, async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(repoRoot, 'bench/dev-startup.mjs'), '--rounds', '2', '--json'],
    {
      cwd: repoRoot,
      timeout: 140_000,
    },
  )
  const result = JSON.parse(stdout)
  expect(result.builds.before).toBeUndefined()
  expect(result.builds.after.samples).toHaveLength(2)
  expect(result.builds.after.median).toBeGreaterThan(0)
  expect(result.builds.after.p90).toBeGreaterThanOrEqual(result.builds.after.median)
})
