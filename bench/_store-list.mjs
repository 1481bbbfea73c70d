// ListTasks latency on a server whose store holds many tasks: one call at a time on one kept-alive
// connection, so each figure is the time of one call (request, the store's page, the answer) and nothing
// queues behind another. Three calls: the first page (pageSize 50), the first page of a status filter
// (TASK_STATE_FAILED: one task in ten), and the second page (following the first page's nextPageToken).
// Every answer is checked: a fast wrong page is worth nothing.
import { Agent, request } from 'node:http'
import { performance } from 'node:perf_hooks'
import { Samples } from './_stats.mjs'

const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' }
const PAGE_SIZE = 50
export const FILTER_STATE = 'TASK_STATE_FAILED'

function call(url, agent, params) {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params }))
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const req = request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': body.length }, timeout: 60_000 },
      (res) => {
        const chunks = []
        res.on('data', (chunk) => chunks.push(chunk))
        res.once('end', () => {
          const ms = performance.now() - started
          const text = Buffer.concat(chunks).toString('utf8')
          if (res.statusCode !== 200)
            return reject(new Error(`ListTasks: HTTP ${res.statusCode}: ${text.slice(0, 300)}`))
          resolve({ ms, answer: JSON.parse(text) })
        })
        res.once('error', reject)
      },
    )
    req.once('timeout', () => req.destroy(new Error('ListTasks: no answer within 60 s')))
    req.once('error', reject)
    req.end(body)
  })
}

function fail(what, answer) {
  throw new Error(`ListTasks answered wrongly (${what}): ${JSON.stringify(answer).slice(0, 400)}`)
}

/** A page must hold `size` tasks, newest status first, each in `state` when given, and count `total`. */
function checkPage(answer, { total, state, size = Math.min(PAGE_SIZE, total) }) {
  const result = answer?.result
  if (!result || !Array.isArray(result.tasks)) fail('no tasks', answer)
  if (result.totalSize !== total) fail(`totalSize ${result.totalSize}, expected ${total}`, answer)
  if (result.tasks.length !== size) fail(`${result.tasks.length} tasks, expected ${size}`, answer)
  for (let i = 0; i < result.tasks.length; i++) {
    const task = result.tasks[i]
    if (state && task.status?.state !== state)
      fail(`a task in ${task.status?.state} under a filter on ${state}`, answer)
    if (i > 0 && task.status.timestamp > result.tasks[i - 1].status.timestamp) fail('tasks out of order', answer)
  }
  return result
}

/**
 * Runs the three calls on a server holding `total` tasks, a tenth of them failed. `warmup` calls of each kind
 * are not counted; then `calls` of each, the kinds interleaved. Resolves with { first, filtered, next }, each
 * { p50, p99, mean, max } in ms.
 */
export async function listLatency(url, { total, failed, warmup, calls }) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const first = checkPage((await call(url, agent, { pageSize: PAGE_SIZE })).answer, { total })
    if (!first.nextPageToken) fail('no nextPageToken on the first page', first)
    const second = checkPage((await call(url, agent, { pageSize: PAGE_SIZE, pageToken: first.nextPageToken })).answer, {
      total,
    })
    const firstIds = new Set(first.tasks.map((task) => task.id))
    if (second.tasks.some((task) => firstIds.has(task.id))) fail('the second page repeats the first', second)
    if (second.tasks[0].status.timestamp > first.tasks.at(-1).status.timestamp)
      fail('the second page is newer than the first', second)
    const kinds = {
      first: { params: { pageSize: PAGE_SIZE }, check: { total } },
      filtered: {
        params: { pageSize: PAGE_SIZE, status: FILTER_STATE },
        check: { total: failed, state: FILTER_STATE },
      },
      next: { params: { pageSize: PAGE_SIZE, pageToken: first.nextPageToken }, check: { total } },
    }
    const samples = Object.fromEntries(Object.keys(kinds).map((kind) => [kind, new Samples()]))
    for (let i = 0; i < warmup + calls; i++) {
      for (const [kind, { params, check }] of Object.entries(kinds)) {
        const { ms, answer } = await call(url, agent, params)
        checkPage(answer, check)
        if (i >= warmup) samples[kind].push(ms)
      }
    }
    return Object.fromEntries(Object.entries(samples).map(([kind, s]) => [kind, { ...s.summary(), calls: s.length }]))
  } finally {
    agent.destroy()
  }
}
