import { rmSync, writeFileSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rpc } from '../_rpc.ts'
import { SLOW } from '../_served-project.ts'
import { browserTestsEnabled, saveScreenshot } from './_browser.ts'
import { type DevServer, gatedAgentSource, gateFile, generateProject, sendMessage, writeAgent } from './_dev-project.ts'
import { closeAll, openInspector, startDevAndBrowser } from './_page.ts'

/**
 * Times in the inspector's Tasks view: a replayed timeline places each event at the time it happened (not all at
 * the moment of the replay), saying "time not known" where nothing tells; the task list says when each task last
 * changed.
 */

let project: string
let gate: string
let dev: DevServer
let browser: Browser | undefined
const pages: Page[] = []
/** The task another client sent, whose events came `apart` ms apart at least. */
let taskId: string
let apart: number

/** A platform-dialect call to the dev server's agent, its result. */
async function rpcResult(method: string, params: unknown): Promise<any> {
  return (await rpc(dev.url, method, params)).body.result
}

/** Waits (a hook cannot use expect.poll) until `done` says yes, up to `SLOW`. */
async function until(done: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + SLOW
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what} did not come within ${SLOW / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

async function open(): Promise<Page> {
  const page = await openInspector(browser!, dev.inspectorUrl)
  pages.push(page)
  return page
}

/** The task's line in the Tasks view's list (found by the start of its id, which the line shows). */
const lineOf = (page: Page) =>
  page.locator('.task-list li', { has: page.locator(`code:text-is("${taskId.slice(0, 8)}")`) })

/** The task's timeline, replayed in the Tasks view: each entry's offset text, its title and what it says. */
async function replayedTimeline(page: Page): Promise<Array<{ offset: string; title: string | null; text: string }>> {
  await page.getByRole('button', { name: 'Tasks', exact: true }).click()
  await lineOf(page).getByRole('button').click()
  await page.getByRole('button', { name: 'Replay its events' }).click()
  const timeline = page.locator('.timeline')
  await expect.poll(() => timeline.innerText().catch(() => ''), { timeout: SLOW }).toContain('state → completed')
  return timeline.locator('.timeline-entry').evaluateAll((entries) =>
    entries.map((entry) => {
      const offset = entry.querySelector('.offset')!
      return {
        offset: offset.textContent ?? '',
        title: offset.getAttribute('title'),
        text: entry.querySelector('.summary')!.textContent ?? '',
      }
    }),
  )
}

/** "+1234 ms", "+12.5 s", "+1.5 min" as ms. */
function offsetMs(text: string): number {
  const match = /^\+([\d.]+) (ms|s|min)$/.exec(text)
  if (!match) throw new Error(`not an offset: ${JSON.stringify(text)}`)
  return Number(match[1]) * { ms: 1, s: 1000, min: 60_000 }[match[2] as 'ms' | 's' | 'min']
}

describe.runIf(browserTestsEnabled())('times in the inspector', () => {
  beforeAll(async () => {
    project = await generateProject()
    gate = gateFile(project)
    rmSync(gate, { force: true })
    writeAgent(project, gatedAgentSource({ gate }))
    ;({ dev, browser } = await startDevAndBrowser(project))
    // Another client's streaming task: "alpha " at once, then nothing until the gate opens, a measured while later.
    const { body } = await sendMessage(dev.url, 'stream', { configuration: { blocking: false } })
    taskId = body.result.id
    await until(
      async () => JSON.stringify((await rpcResult('tasks/get', { id: taskId })).artifacts).includes('alpha'),
      'the first chunk',
    )
    const waitFrom = Date.now()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    apart = Date.now() - waitFrom
    writeFileSync(gate, '')
    await until(
      async () => (await rpcResult('tasks/get', { id: taskId })).status.state === 'completed',
      'the completion',
    )
  }, 3 * SLOW)

  afterAll(() => closeAll(pages, browser), 2 * SLOW)

  it("replays a task with each event at its own offset from the task's creation", { timeout: 2 * SLOW }, async () => {
    const page = await open()
    const entries = await replayedTimeline(page)
    const frames = entries.filter((entry) => !entry.text.startsWith('sent'))
    const first = frames.find((entry) => entry.text.includes('artifact stream'))!
    const last = frames.find((entry) => entry.text.includes('state → completed'))!
    // Every event has its time, none before the task's creation, in the order they happened.
    const offsets = frames.map((entry) => offsetMs(entry.offset))
    expect(offsets.every((ms) => ms >= 0)).toBe(true)
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b))
    // The gate held the end back a measured while after the first chunk: the timeline shows that gap.
    expect(offsetMs(last.offset) - offsetMs(first.offset)).toBeGreaterThanOrEqual(apart)
    // Each offset names its exact time, and the timeline what they count from.
    for (const entry of frames) expect(entry.title).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(await page.locator('.timeline').innerText()).toContain("offsets from the task's creation")
    await saveScreenshot(page, 'replayed-timeline')
  })

  it('says "time not known" for the events the dev server has no time for, and dates status changes by their own', {
    timeout: 2 * SLOW,
  }, async () => {
    const page = await open()
    // As when the dev server has forgotten the task's times: only what the events carry is left.
    await page.route('**/__a2a/api/tasks/*/times', (route) =>
      route.fulfill({ status: 404, contentType: 'application/json', body: '{"error":"forgotten"}' }),
    )
    const entries = await replayedTimeline(page)
    expect(entries.map((entry) => entry.text).join('\n')).toContain('artifact stream')
    for (const entry of entries) {
      if (entry.text.startsWith('artifact')) expect(entry.offset, entry.text).toBe('time not known')
      if (entry.text.startsWith('state')) expect(entry.offset, entry.text).toMatch(/^\+/)
    }
    expect(await page.locator('.timeline').innerText()).toContain('offsets from its first event with a known time')
    await saveScreenshot(page, 'replayed-timeline-unknown-times')
    const working = entries.find((entry) => entry.text.startsWith('state → working'))!
    const completed = entries.find((entry) => entry.text.startsWith('state → completed'))!
    expect(offsetMs(completed.offset) - offsetMs(working.offset)).toBeGreaterThanOrEqual(apart)
    const task = await rpcResult('tasks/get', { id: taskId })
    expect(completed.title).toBe(task.status.timestamp)
  })

  it('serves the times the dev server noted for a task, and says which task it has none for', {
    timeout: SLOW,
  }, async () => {
    const times = await fetch(`${dev.inspectorUrl}api/tasks/${encodeURIComponent(taskId)}/times`)
    expect(times.status).toBe(200)
    const body = (await times.json()) as { createdAt: number; firstSeq: number; at: number[]; lastSeq: number }
    expect(body.firstSeq).toBe(1)
    expect(body.lastSeq).toBe(body.at.length)
    expect(body.at.length).toBeGreaterThanOrEqual(4) // working, "alpha ", "omega", completed
    expect(body.at[0]).toBeGreaterThanOrEqual(body.createdAt)
    expect(body.at).toEqual([...body.at].sort((a, b) => a - b))
    expect(body.at.at(-1)! - body.at[0]!).toBeGreaterThanOrEqual(apart)
    const unknown = await fetch(`${dev.inspectorUrl}api/tasks/no-such-task/times`)
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: string }).error).toContain('"no-such-task"')
    const garbled = await fetch(`${dev.inspectorUrl}api/tasks/%E0%A4%A/times`)
    expect(garbled.status).toBe(400)
  })

  it('shows when each task in the list last changed, relative, with its ISO time as the title', {
    timeout: 2 * SLOW,
  }, async () => {
    const page = await open()
    await page.getByRole('button', { name: 'Tasks', exact: true }).click()
    const time = lineOf(page).locator('time')
    await time.waitFor()
    const task = await rpcResult('tasks/get', { id: taskId })
    expect(await time.getAttribute('title')).toBe(task.status.timestamp)
    expect(await time.getAttribute('datetime')).toBe(task.status.timestamp)
    expect(await time.innerText()).toMatch(/^(now|\d+ (seconds?|minutes?) ago)$/)
    // A task of another client shows up live with its time too.
    await sendMessage(dev.url, 'a later task')
    const later = page.locator('.task-list li', { hasText: 'a later task' }).locator('time')
    await expect.poll(() => later.innerText().catch(() => ''), { timeout: SLOW }).toMatch(/^(now|\d+ seconds? ago)$/)
  })
})
