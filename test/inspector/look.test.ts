import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SLOW } from '../_served-project.ts'
import { axeViolations, browserTestsEnabled, saveScreenshot } from './_browser.ts'
import { type DevServer, gatedAgentSource, gateFile, generateProject, writeAgent } from './_dev-project.ts'
import { closeAll, openInspector, sendFromPage, startDevAndBrowser, stateOf } from './_page.ts'

/**
 * How the inspector looks: it follows the system's light or dark scheme and reads well in both (axe), fits a
 * 320 px wide window, and says what the dialects are beside their selector.
 */

let dev: DevServer
let browser: Browser | undefined
const pages: Page[] = []

async function open(options: Parameters<typeof openInspector>[2] = {}): Promise<Page> {
  const page = await openInspector(browser!, dev.inspectorUrl, options)
  pages.push(page)
  return page
}

/** The relative luminance of a computed CSS colour `rgb(r, g, b)` (WCAG), 0 black to 1 white. */
function luminance(color: string): number {
  const [r, g, b] = color
    .match(/\d+(\.\d+)?/g)!
    .slice(0, 3)
    .map((channel) => {
      const c = Number(channel) / 255
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
    }) as [number, number, number]
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}

const backgroundOf = (page: Page, selector: string) =>
  page
    .locator(selector)
    .first()
    .evaluate((element) => getComputedStyle(element).backgroundColor)

async function expectReadable(page: Page, view: string): Promise<void> {
  expect(await axeViolations(page), view).toEqual([])
}

describe.runIf(browserTestsEnabled())('how the inspector looks', () => {
  beforeAll(async () => {
    const project = await generateProject()
    writeAgent(project, gatedAgentSource({ gate: gateFile(project) }))
    ;({ dev, browser } = await startDevAndBrowser(project))
  }, 3 * SLOW)

  afterAll(() => closeAll(pages, browser), 2 * SLOW)

  for (const colorScheme of ['light', 'dark'] as const) {
    it(`follows a ${colorScheme} system scheme, every view readable (axe)`, { timeout: 3 * SLOW }, async () => {
      const page = await open({ colorScheme })
      const dark = luminance(await backgroundOf(page, 'html')) < 0.1
      expect(dark).toBe(colorScheme === 'dark')
      // The chat with an answer and an error, the task list and a timeline, the card, the push view.
      await sendFromPage(page, 'hello')
      await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('completed')
      await page
        .getByLabel('File')
        .setInputFiles({ name: 'picture.png', mimeType: 'image/png', buffer: Buffer.from('not a png') })
      await sendFromPage(page, 'a picture the agent does not take')
      await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('error')
      await page.getByLabel('File').setInputFiles([])
      // The user's bubble, the agent's, the badges: each on the scheme's own background.
      expect(luminance(await backgroundOf(page, '.bubble.user')) < 0.1).toBe(dark)
      expect(luminance(await backgroundOf(page, '.bubble.agent')) < 0.1).toBe(dark)
      await page.getByText('What do these mean?').click()
      await expectReadable(page, 'chat')
      await saveScreenshot(page, `chat-${colorScheme}`)
      await page.getByRole('button', { name: 'Timeline of task' }).click()
      await page.locator('.timeline').waitFor()
      await page.getByRole('checkbox', { name: 'Show raw JSON-RPC and SSE frames' }).check()
      await expectReadable(page, 'tasks')
      await page.getByRole('button', { name: 'Card', exact: true }).click()
      await page.locator('.card-view .json-tree').waitFor()
      await expectReadable(page, 'card')
      await page.getByRole('button', { name: 'Push', exact: true }).click()
      await expectReadable(page, 'push')
    })
  }

  it('fits a 320 px wide window: the Dialect select and its explanation within it, nothing scrolled sideways', {
    timeout: 2 * SLOW,
  }, async () => {
    const page = await open({ viewport: { width: 320, height: 640 } })
    const select = page.getByRole('combobox', { name: 'Dialect' })
    // Every option there, REST's too (offered once the card is read).
    await page.locator('#dialect option[value="a2a-1.0-rest"]').waitFor({ state: 'attached' })
    const box = (await select.boundingBox())!
    expect(box.x).toBeGreaterThanOrEqual(0)
    expect(box.x + box.width).toBeLessThanOrEqual(320)
    // Its widest option still shows whole in the box it has.
    expect(await select.evaluate((element: HTMLSelectElement) => element.scrollWidth <= element.clientWidth)).toBe(true)
    await page.getByText('What do these mean?').click()
    const help = (await page.locator('#dialect-help').boundingBox())!
    expect(help.x).toBeGreaterThanOrEqual(0)
    expect(help.x + help.width).toBeLessThanOrEqual(320)
    const sideways = () => page.evaluate(() => document.documentElement.scrollWidth)
    expect(await sideways()).toBeLessThanOrEqual(320)
    // The chat with an answer, then the task's timeline with its raw frames: still no sideways scroll.
    await sendFromPage(page, 'narrow')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('completed')
    expect(await sideways()).toBeLessThanOrEqual(320)
    await page.getByRole('button', { name: 'Timeline of task' }).click()
    await page.getByRole('checkbox', { name: 'Show raw JSON-RPC and SSE frames' }).check()
    expect(await page.locator('.timeline').innerText()).toContain('state → completed')
    expect(await sideways()).toBeLessThanOrEqual(320)
  })

  it('explains the dialects next to the selector: the platform is this runtime’s own methods, v1.0 and v0.3 the A2A versions, REST v1.0 over HTTP+JSON', {
    timeout: SLOW,
  }, async () => {
    const page = await open()
    const select = page.getByRole('combobox', { name: 'Dialect' })
    await page.locator('#dialect option[value="a2a-1.0-rest"]').waitFor({ state: 'attached' })
    // Described for assistive technology, and told in a title on hover.
    const describedBy = await select.getAttribute('aria-describedby')
    expect(describedBy).toBe('dialect-help')
    expect(await select.getAttribute('title')).toMatch(/Platform.*own JSON-RPC methods.*official A2A protocol/s)
    await page.getByText('What do these mean?').click()
    const help = page.locator('#dialect-help')
    expect(await help.isVisible()).toBe(true)
    const text = await help.innerText()
    expect(text).toMatch(/Platform:.*own JSON-RPC methods/)
    expect(text).toMatch(/A2A v1\.0.*official A2A protocol/s)
    expect(text).toContain('A2A v0.3')
    expect(text).toMatch(/A2A v1\.0 REST:.*HTTP\+JSON.*POST \/message:stream/s)
    expect(await select.getAttribute('title')).toContain('A2A v1.0 REST: v1.0 over HTTP+JSON')
    // Beside the select: in the same part of the header.
    expect(await page.locator('header .dialect #dialect-help').count()).toBe(1)
  })
})
