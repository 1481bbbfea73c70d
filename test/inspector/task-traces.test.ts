import { randomBytes } from 'node:crypto'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rpc } from '../_rpc.ts'
import { SLOW } from '../_served-project.ts'
import { browserTestsEnabled, saveScreenshot } from './_browser.ts'
import { type DevServer, gatedAgentSource, gateFile, generateProject, startDev, writeAgent } from './_dev-project.ts'
import { closeAll, lastExchange, openInspector, sendFromPage, startDevAndBrowser, stateOf } from './_page.ts'

/**
 * The dev inspector with telemetry (issue 37): under `A2A_TELEMETRY=otel` and an OpenTelemetry SDK the project
 * registers, the Tasks view shows the traces a task's events were made in (copyable; linked to the trace viewer
 * `A2A_TRACE_URL` names) and each timeline entry's trace; without telemetry, nothing of it.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const VIEWER = 'http://localhost:16686/trace/{traceId}'

/** An SDK as a project registers one: a tracer provider (exporting nowhere), async context, W3C trace context. */
const OTEL_SOURCE = `import { context, propagation, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'

// Once per process: a2a dev loads this module again on each save.
const registered = globalThis as { otelRegistered?: boolean }
if (!registered.otelRegistered) {
  registered.otelRegistered = true
  trace.setGlobalTracerProvider(new BasicTracerProvider())
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
}
`

/** A project whose agent is the gated fixture, with (`traced`) the SDK above imported first. */
async function fixtureProject(traced: boolean): Promise<string> {
  const project = await generateProject()
  const gate = gateFile(project)
  // Open from the start: "stream" completes at once.
  writeFileSync(gate, '')
  if (traced) {
    // The repository's OpenTelemetry packages, as an install would put them.
    mkdirSync(join(project, 'node_modules'), { recursive: true })
    symlinkSync(join(repoRoot, 'node_modules/@opentelemetry'), join(project, 'node_modules/@opentelemetry'), 'dir')
    writeFileSync(join(project, 'src/otel.ts'), OTEL_SOURCE)
  }
  writeAgent(project, `${traced ? "import './otel.ts'\n" : ''}${gatedAgentSource({ gate })}`)
  return project
}

/** A caller's trace, as another process sends it in `traceparent`. */
function callerTrace(): { traceId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex')
  return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` }
}

/** The tasks the dev server lists (`/__a2a/api/tasks`). */
async function listedTasks(dev: DevServer): Promise<Array<Record<string, any>>> {
  const response = await fetch(`${dev.inspectorUrl}api/tasks`)
  return ((await response.json()) as { tasks: Array<Record<string, any>> }).tasks
}

/** The first frame of the live channel (`hello`), read and the stream dropped. */
async function hello(dev: DevServer): Promise<Record<string, unknown>> {
  const controller = new AbortController()
  const response = await fetch(`${dev.inspectorUrl}events`, { signal: controller.signal })
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  while (!text.includes('\n\n')) text += (await reader.read()).value ?? ''
  controller.abort()
  return JSON.parse(/^data: (.*)$/m.exec(text)![1]!)
}

/** Opens the task in the Tasks view (by the start of its id, as its line shows it). */
async function openTask(page: Page, taskId: string): Promise<void> {
  await page.getByRole('button', { name: 'Tasks', exact: true }).click()
  await page
    .locator('.task-list li', { has: page.locator(`code:text-is("${taskId.slice(0, 8)}")`) })
    .getByRole('button')
    .click()
}

/** Each timeline entry: what it says, and its trace's text and link (null when it shows none). */
function timelineEntries(page: Page) {
  return page.locator('.timeline .timeline-entry').evaluateAll((entries) =>
    entries.map((entry) => {
      const trace = entry.querySelector('.trace-ref')
      return {
        text: entry.querySelector('.summary > div')?.textContent ?? '',
        trace: trace?.textContent ?? null,
        title: trace?.getAttribute('title') ?? null,
        href: trace?.getAttribute('href') ?? null,
      }
    }),
  )
}

describe.runIf(browserTestsEnabled())('traces in the inspector, with telemetry', () => {
  let project: string
  let dev: DevServer
  let browser: Browser | undefined
  const pages: Page[] = []
  /** A task another client sent: "ask" in one trace, its answer in another. */
  let taskId: string
  const asked = callerTrace()
  const answered = callerTrace()

  /** Saves the traced fixture agent, streaming or not, and waits for its card to say so. */
  async function saveAgent({ streaming }: { streaming: boolean }): Promise<void> {
    const source = gatedAgentSource({ gate: gateFile(project) })
    writeAgent(project, `import './otel.ts'\n${source.replace('streaming: true', `streaming: ${streaming}`)}`)
    const card = async () => (await (await fetch(`${dev.url}.well-known/agent.json`)).json()) as any
    await expect.poll(async () => (await card()).capabilities.streaming, { timeout: SLOW }).toBe(streaming)
  }

  async function open(): Promise<Page> {
    const page = await openInspector(browser!, dev.inspectorUrl, {
      permissions: ['clipboard-read', 'clipboard-write'],
    })
    pages.push(page)
    return page
  }

  beforeAll(async () => {
    project = await fixtureProject(true)
    // The viewer's address in the project's .env, so a test can take it away with a save.
    writeFileSync(join(project, '.env'), `A2A_TRACE_URL=${VIEWER}\n`)
    ;({ dev, browser } = await startDevAndBrowser(project, { A2A_TELEMETRY: 'otel' }))
    const first = await rpc(
      dev.url,
      'message/send',
      { message: { role: 'user', messageId: 'm-ask', parts: [{ kind: 'text', text: 'ask' }] } },
      { headers: { traceparent: asked.traceparent } },
    )
    taskId = first.body.result.id
    expect(first.body.result.status.state).toBe('input-required')
    const second = await rpc(
      dev.url,
      'message/send',
      { message: { role: 'user', messageId: 'm-answer', taskId, parts: [{ kind: 'text', text: 'yes' }] } },
      { headers: { traceparent: answered.traceparent } },
    )
    expect(second.body.result.status.state).toBe('completed')
  }, 3 * SLOW)

  afterAll(() => closeAll(pages, browser), 2 * SLOW)

  it("lists each task with the traces its events were made in: the caller's, from the event each began", {
    timeout: SLOW,
  }, async () => {
    const line = (await listedTasks(dev)).find((task) => task.id === taskId)!
    expect(line.traces).toEqual([
      { firstSeq: 0, traceId: asked.traceId },
      { firstSeq: expect.any(Number), traceId: answered.traceId },
    ])
    expect(line.traces[1].firstSeq).toBeGreaterThan(0)
    // One task's line, as a page asks it for an answer without an event number.
    const one = await fetch(`${dev.inspectorUrl}api/tasks/${encodeURIComponent(taskId)}`)
    expect(await one.json()).toEqual(line)
    expect((await fetch(`${dev.inspectorUrl}api/tasks/no-such-task`)).status).toBe(404)
    expect(await hello(dev)).toMatchObject({ tracing: { url: VIEWER } })
  })

  it("shows the task's traces whole, copyable and linked, and each replayed event's trace", {
    timeout: 2 * SLOW,
  }, async () => {
    const page = await open()
    await openTask(page, taskId)
    const traces = page.getByRole('list', { name: 'Traces of the task' })
    await expect.poll(() => traces.locator('li').count(), { timeout: SLOW }).toBe(2)
    const listed = await traces.locator('li').allInnerTexts()
    expect(listed[0]).toContain(asked.traceId)
    expect(listed[0]).toContain('from its creation')
    expect(listed[1]).toContain(answered.traceId)
    const viewerLinks = traces.getByRole('link', { name: 'Open in the trace viewer' })
    expect(await viewerLinks.evaluateAll((links) => links.map((link) => link.getAttribute('href')))).toEqual([
      VIEWER.replace('{traceId}', asked.traceId),
      VIEWER.replace('{traceId}', answered.traceId),
    ])
    await page.getByRole('button', { name: `Copy trace id ${answered.traceId}` }).click()
    await expect
      .poll(() => page.getByRole('button', { name: `Copy trace id ${answered.traceId}` }).innerText())
      .toBe('Copied')
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(answered.traceId)

    await page.getByRole('button', { name: 'Replay its events' }).click()
    await expect.poll(() => page.locator('.timeline').innerText(), { timeout: SLOW }).toContain('state → completed')
    const entries = await timelineEntries(page)
    const question = entries.find((entry) => entry.text.includes('input-required'))!
    const done = entries.find((entry) => entry.text.includes('state → completed'))!
    expect(question).toMatchObject({
      trace: `trace ${asked.traceId.slice(0, 8)}`,
      title: `Trace ${asked.traceId} in the trace viewer`,
      href: VIEWER.replace('{traceId}', asked.traceId),
    })
    expect(done).toMatchObject({
      trace: `trace ${answered.traceId.slice(0, 8)}`,
      href: VIEWER.replace('{traceId}', answered.traceId),
    })
    // The request is the page's own, made in no trace the task reports.
    expect(entries[0]!.trace).toBeNull()
    await saveScreenshot(page, 'task-traces')
  })

  it("links each event of a stream the page sends (platform dialect, numbered to tell) to the task's trace", {
    timeout: 2 * SLOW,
  }, async () => {
    const page = await open()
    await sendFromPage(page, 'stream')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toContain('completed')
    const streamed = (await listedTasks(dev)).find((task) => task.title === 'stream')!
    const traceId: string = streamed.traces[0].traceId
    expect(streamed.traces).toEqual([{ firstSeq: 0, traceId }])
    expect(await lastExchange(page).innerText()).toContain('alpha omega')
    await openTask(page, streamed.id)
    await page.getByText('Show raw').click()
    const entries = await timelineEntries(page)
    const frames = entries.filter((entry) => entry.text && !entry.text.startsWith('sent'))
    expect(frames.length).toBeGreaterThanOrEqual(3)
    for (const frame of frames) expect(frame, frame.text).toMatchObject({ href: VIEWER.replace('{traceId}', traceId) })
    // The platform dialect numbered its frames because the page asked, with Last-Event-ID: 0.
    expect(await page.locator('.timeline .raw').allInnerTexts()).toContainEqual(expect.stringMatching(/^id: \d+$/m))
  })

  it('shows the traceparent a push delivery carries, in the trace of the event it reports', {
    timeout: 2 * SLOW,
  }, async () => {
    const page = await open()
    await page.getByRole('checkbox', { name: 'Push notifications to the inspector' }).check()
    await sendFromPage(page, 'pushed')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toContain('completed')
    const pushed = (await listedTasks(dev)).find((task) => task.title === 'pushed')!
    const traceId: string = pushed.traces[0].traceId
    await page.getByRole('button', { name: 'Push', exact: true }).click()
    const deliveries = page.getByRole('list', { name: 'Deliveries, newest first' })
    await expect.poll(() => deliveries.innerText(), { timeout: SLOW }).toContain('completed')
    const text = await deliveries.innerText()
    expect(text).toContain('traceparent')
    expect(text).toMatch(new RegExp(`00-${traceId}-[0-9a-f]{16}-01`))
  })

  it("links the answers of an agent that does not stream (its task read until it settles) to the task's trace", {
    timeout: 2 * SLOW,
  }, async () => {
    const page = await open()
    // The same agent without streaming: the page sends, then reads the task (tasks/get) until it settles.
    await saveAgent({ streaming: false })
    try {
      await page.reload()
      await sendFromPage(page, 'polled')
      await expect.poll(() => stateOf(page), { timeout: SLOW }).toContain('completed')
      const polled = (await listedTasks(dev)).find((task) => task.title === 'polled')!
      const traceId: string = polled.traces[0].traceId
      await openTask(page, polled.id)
      const entries = await timelineEntries(page)
      const settled = entries.filter((entry) => entry.text.includes('completed'))
      expect(settled.length).toBeGreaterThanOrEqual(1)
      for (const entry of settled)
        expect(entry, entry.text).toMatchObject({ href: VIEWER.replace('{traceId}', traceId) })
      // Requests are the page's own: no trace.
      expect(entries.filter((entry) => entry.trace === null).length).toBeGreaterThanOrEqual(1)
    } finally {
      // The later tests replay, which takes a streaming agent.
      await saveAgent({ streaming: true })
    }
  })

  it('shows the ids alone once A2A_TRACE_URL is taken away (a save of .env), and says a bad one in one line', {
    timeout: 2 * SLOW,
  }, async () => {
    const page = await open()
    await openTask(page, taskId)
    const traces = page.getByRole('list', { name: 'Traces of the task' })
    await expect.poll(() => traces.getByRole('link').count(), { timeout: SLOW }).toBe(2)
    writeFileSync(join(project, '.env'), '')
    await expect.poll(() => traces.getByRole('link').count(), { timeout: SLOW }).toBe(0)
    expect(await traces.innerText()).toContain(asked.traceId)
    await page.getByRole('button', { name: 'Replay its events' }).click()
    await expect.poll(() => page.locator('.timeline').innerText(), { timeout: SLOW }).toContain('state → completed')
    const done = (await timelineEntries(page)).find((entry) => entry.text.includes('state → completed'))!
    expect(done).toEqual({
      text: expect.any(String),
      trace: `trace ${answered.traceId.slice(0, 8)}`,
      title: `Trace ${answered.traceId}`,
      href: null,
    })
    expect(await hello(dev)).toMatchObject({ tracing: {} })
    // A start with a viewer address that has no place for the id stops in one line naming the variable.
    const failed = await startDev(project, { A2A_TELEMETRY: 'otel', A2A_TRACE_URL: 'http://localhost:16686/' }).then(
      () => undefined,
      (error: Error) => error.message,
    )
    expect(failed).toContain(
      'A2A_TRACE_URL must be an http: or https: address with {traceId} where the trace id goes, e.g. http://localhost:16686/trace/{traceId} (got "http://localhost:16686/")',
    )
    expect(failed).not.toMatch(/\n\s+at /)
  })
})

describe.runIf(browserTestsEnabled())('traces in the inspector, without telemetry', () => {
  let dev: DevServer
  let browser: Browser | undefined
  const pages: Page[] = []

  beforeAll(async () => {
    ;({ dev, browser } = await startDevAndBrowser(await fixtureProject(false), { A2A_TRACE_URL: VIEWER }))
  }, 3 * SLOW)

  afterAll(() => closeAll(pages, browser), 2 * SLOW)

  it('shows no trace, asks no numbering and lists none, even with a traceparent sent', {
    timeout: 2 * SLOW,
  }, async () => {
    const { traceparent } = callerTrace()
    const sent = await rpc(
      dev.url,
      'message/send',
      { message: { role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'hello' }] } },
      { headers: { traceparent } },
    )
    expect(sent.body.result.status.state).toBe('completed')
    const page = await openInspector(browser!, dev.inspectorUrl)
    pages.push(page)
    await sendFromPage(page, 'stream')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toContain('completed')
    const listed = await listedTasks(dev)
    expect(listed).toHaveLength(2)
    for (const line of listed) expect(line).not.toHaveProperty('traces')
    expect(await hello(dev)).not.toHaveProperty('tracing')
    const streamed = listed.find((task) => task.title === 'stream')!
    await openTask(page, streamed.id)
    await page.getByText('Show raw').click()
    await expect.poll(() => page.locator('.timeline .raw').count()).toBeGreaterThan(2)
    expect(await page.locator('.trace-ref, .task-traces').count()).toBe(0)
    // The platform dialect's frames unnumbered, as the page did not ask.
    expect(await page.locator('.timeline .raw').allInnerTexts()).not.toContainEqual(expect.stringMatching(/^id: /m))
  })
})
