import type { Browser, Page, Route } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rpc } from '../_rpc.ts'
import { SLOW } from '../_served-project.ts'
import { axeViolations, browserTestsEnabled, launchBrowser } from './_browser.ts'
import {
  cleanUp,
  type DevServer,
  gatedAgentSource,
  gateFile,
  generateProject,
  startDev,
  writeAgent,
} from './_dev-project.ts'
import { answerOf, chooseDialect, lastExchange, openInspector, sendFromPage, stateOf } from './_page.ts'

/**
 * A message the agent never takes — refused for its credentials (401), while the code does not load (503), for
 * its params (-32602) — ends its exchange: the error shows with its code, message and HTTP status, and the
 * badge leaves "sending". In REST the same, read from a google.rpc.Status: HTTP status, its name, the A2A reason.
 */

let project: string
let dev: DevServer
let browser: Browser | undefined
let page: Page

/** The inspector's fixture agent, asking for a bearer token. */
let guardedSource: string

const errorOf = (page: Page) =>
  lastExchange(page)
    .locator('.error')
    .innerText()
    .catch(() => '')

describe.runIf(browserTestsEnabled())('a send the agent refuses, in the inspector', () => {
  beforeAll(async () => {
    project = await generateProject()
    guardedSource = gatedAgentSource({ gate: gateFile(project) }).replace(
      'capabilities: {',
      "authentication: { schemes: ['bearer'] },\n    capabilities: {",
    )
    writeAgent(project, guardedSource)
    const [started, launched] = await Promise.allSettled([
      startDev(project, { A2A_BEARER_TOKEN: 'inspector-secret' }),
      launchBrowser(),
    ])
    if (launched.status === 'fulfilled') browser = launched.value
    if (started.status === 'rejected') throw started.reason
    dev = started.value
    if (launched.status === 'rejected') throw launched.reason
    page = await openInspector(browser!, dev.inspectorUrl)
  }, 3 * SLOW)

  afterAll(async () => {
    await page?.context().close()
    await browser?.close()
    await cleanUp()
  }, 2 * SLOW)

  it('shows a 401 as its code, message and status, and the exchange is no longer sending', {
    timeout: 2 * SLOW,
  }, async () => {
    await sendFromPage(page, 'let me in')
    await expect.poll(() => errorOf(page), { timeout: SLOW }).toContain('HTTP 401')
    expect(await errorOf(page)).toMatch(/^-32000: Unauthorized: .*bearer/i)
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('error')
    expect(await lastExchange(page).locator('.bubble.agent').getAttribute('aria-busy')).toBe('false')
  })

  it('shows a -32602 the same way, naming the field', { timeout: 2 * SLOW }, async () => {
    await page.getByLabel('Bearer token').fill('inspector-secret')
    await page
      .getByLabel('File')
      .setInputFiles({ name: 'picture.png', mimeType: 'image/png', buffer: Buffer.from('not really a png') })
    await sendFromPage(page, 'a picture')
    await expect.poll(() => errorOf(page), { timeout: SLOW }).toContain('-32602')
    expect(await errorOf(page)).toContain('params.message.parts[1]')
    expect(await errorOf(page)).toContain('image/png')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('error')
    await page.getByLabel('File').setInputFiles([])
  })

  it('shows a 503 while the agent does not load, and sends again once it does', { timeout: 3 * SLOW }, async () => {
    writeAgent(project, guardedSource.replace("if (text === 'ask')", "if (text === 'ask' {"))
    await page.getByTestId('load-failure').waitFor()
    await sendFromPage(page, 'while broken')
    await expect.poll(() => errorOf(page), { timeout: SLOW }).toContain('HTTP 503')
    expect(await errorOf(page)).toContain('-32603: The agent failed to load')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('error')
    writeAgent(project, guardedSource)
    await page.getByTestId('reloaded').waitFor()
    // The refused message is still in the box: sent again, it is answered.
    await page.getByRole('button', { name: 'Send', exact: true }).click()
    await expect.poll(() => answerOf(page).catch(() => ''), { timeout: SLOW }).toContain('Echo: while broken')
    expect(await stateOf(page)).toBe('completed')
    // No exchange is left sending, and the errors read well.
    expect(await page.locator('.exchange .state', { hasText: 'sending' }).count()).toBe(0)
    expect(await axeViolations(page)).toEqual([])
  })

  it('ends a send that gets no answer at all (the connection fails), streamed or not', {
    timeout: 3 * SLOW,
  }, async () => {
    const refuseCalls = (route: Route) =>
      route.request().method() === 'POST' ? route.abort('connectionrefused') : route.continue()
    await page.route(dev.url, refuseCalls)
    await sendFromPage(page, 'into the void')
    await expect.poll(() => errorOf(page), { timeout: SLOW }).toContain('The agent did not answer')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('error')
    await page.unroute(dev.url, refuseCalls)
    // An agent that does not stream is sent a plain message/send: its failure ends the exchange the same way.
    writeAgent(project, guardedSource.replace('capabilities: { streaming: true,', 'capabilities: { streaming: false,'))
    const streams = () =>
      page.evaluate(() =>
        fetch('/.well-known/agent.json', { cache: 'no-store' }).then(
          async (r) => (await r.json()).capabilities.streaming,
        ),
      )
    await expect.poll(streams, { timeout: SLOW }).toBe(false)
    await page.reload()
    await page.getByRole('heading', { level: 1, name: /Inspector Fixture/ }).waitFor()
    await page.route(dev.url, refuseCalls)
    await sendFromPage(page, 'into the void, unstreamed')
    await expect.poll(() => errorOf(page), { timeout: SLOW }).toContain('The agent did not answer')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('error')
    await page.unroute(dev.url, refuseCalls)
    writeAgent(project, guardedSource)
  })

  it('shows a REST error as its HTTP status and status name, its message and its A2A reason', {
    timeout: 3 * SLOW,
  }, async () => {
    await chooseDialect(page, 'a2a-1.0-rest')
    await page.getByLabel('Bearer token').fill('')
    await sendFromPage(page, 'let me in over REST')
    await expect.poll(() => errorOf(page), { timeout: SLOW }).toMatch(/^401 UNAUTHENTICATED: Unauthorized: .*bearer/i)
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('error')
    // A question that another client's cancel ends while the page waits to answer it: the answer is refused with
    // the A2A error type the ErrorInfo names.
    await page.getByLabel('Bearer token').fill('inspector-secret')
    await sendFromPage(page, 'ask')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('input-required')
    const taskId = (await lastExchange(page).getAttribute('data-task-id'))!
    const canceled = await rpc(
      dev.url,
      'tasks/cancel',
      { id: taskId },
      { headers: { authorization: 'Bearer inspector-secret' } },
    )
    expect(canceled.body.result?.status?.state).toBe('canceled')
    await lastExchange(page).getByRole('textbox', { name: 'Your answer' }).fill('too late')
    await lastExchange(page).getByRole('button', { name: 'Answer' }).click()
    await expect
      .poll(() => errorOf(page), { timeout: SLOW })
      .toMatch(/^400 FAILED_PRECONDITION: .+ \[UNSUPPORTED_OPERATION\]$/)
    // The task read back says why: another client canceled it.
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('canceled')
    expect(await errorOf(page)).toContain('[UNSUPPORTED_OPERATION]')
    expect(await axeViolations(page)).toEqual([])
  })
})
