import type { Browser, BrowserContextOptions, Page } from 'playwright-core'
import { SLOW } from '../_served-project.ts'
import { launchBrowser, newPage } from './_browser.ts'
import { cleanUp, type DevServer, startDev } from './_dev-project.ts'

/** What the inspector's browser tests do on its page, as a developer would: by labels and roles. */

/**
 * `a2a dev` on `project` and Chromium, started side by side. A browser that started is closed when the dev server
 * did not (a dev server that started is stopped by `cleanUp`, as every one is).
 */
export async function startDevAndBrowser(
  project: string,
  env: Record<string, string> = {},
): Promise<{ dev: DevServer; browser: Browser }> {
  const [started, launched] = await Promise.allSettled([startDev(project, env), launchBrowser()])
  if (started.status === 'rejected') {
    if (launched.status === 'fulfilled') await launched.value.close()
    throw started.reason
  }
  if (launched.status === 'rejected') throw launched.reason
  return { dev: started.value, browser: launched.value }
}

/**
 * A new page (its own context; `options` as for `newPage`) on the inspector at `url`, once the page knows the
 * agent: its name in the header, read from the card. The caller closes the page's context.
 */
export async function openInspector(
  browser: Browser,
  url: string,
  options: BrowserContextOptions = {},
  agentName: RegExp = /Inspector Fixture/,
): Promise<Page> {
  const page = await newPage(browser, options)
  page.setDefaultTimeout(SLOW)
  await page.goto(url)
  await page.getByRole('heading', { level: 1, name: agentName }).waitFor()
  return page
}

export async function sendFromPage(page: Page, text: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Message', exact: true }).fill(text)
  await page.getByRole('button', { name: 'Send', exact: true }).click()
}

/**
 * Has the page speak `dialect` (an option's value: `platform`, `a2a-1.0`, `a2a-1.0-rest`, `a2a-0.3`), once the
 * select offers it: REST is offered when the agent's card, read after the page opened, lists it.
 */
export async function chooseDialect(page: Page, dialect: string): Promise<void> {
  await page.locator(`#dialect option[value="${dialect}"]`).waitFor({ state: 'attached' })
  await page.getByRole('combobox', { name: 'Dialect' }).selectOption(dialect)
}

export const lastExchange = (page: Page) => page.locator('.exchange').last()
export const stateOf = (page: Page) => lastExchange(page).locator('.state').innerText()
export const answerOf = (page: Page) => lastExchange(page).locator('.artifact').innerText()

/**
 * Ends what a suite started, in the order that lets each stop cleanly: the pages first (the dev server then stops
 * with no inspector connected), the browser, then the dev servers and projects (`cleanUp`).
 */
export async function closeAll(pages: Page[], browser: Browser | undefined): Promise<void> {
  for (const page of pages) await page.context().close()
  await browser?.close()
  await cleanUp()
}
