import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core'

/**
 * A browser for the dev inspector's tests: Debian's Chromium driven by playwright-core, which downloads no browser
 * of its own. The machines that run the tests have no network, so Chromium is told to call nowhere.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))

/** Where Chromium is: `CHROMIUM_PATH`, else Debian's. */
export const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium'

/** Every page of the tests has this size, one image pixel per CSS pixel: the screenshots stay comparable and small. */
export const VIEWPORT = { width: 1280, height: 800 } as const

/** Launching a browser on a loaded 2-core machine can take many seconds. */
const LAUNCH_TIMEOUT = 60_000

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export function chromiumAvailable(): boolean {
  return existsSync(chromiumPath)
}

const inCi = () => Boolean(process.env.CI) && !/^(?:0|false)$/i.test(process.env.CI!)

/**
 * Whether a browser suite runs, for `describe.runIf(browserTestsEnabled())`: yes with Chromium; without it the suite
 * is skipped on a developer's machine, but in CI (`CI` set) this throws, so the test file fails saying why
 * instead of passing with nothing run: CI installs Chromium (.ci/run), and a missing one is a broken setup.
 */
export function browserTestsEnabled(): boolean {
  if (chromiumAvailable()) return true
  if (inCi()) {
    throw new Error(
      `Chromium is missing at ${chromiumPath} and CI is set, so the browser tests cannot be skipped: install Debian's chromium (.ci/run does) or set CHROMIUM_PATH.`,
    )
  }
  return false
}

/** Headless Chromium; the caller closes it (an afterAll). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: CHROMIUM_ARGS, timeout: LAUNCH_TIMEOUT })
}

/** A page in a context of its own at `VIEWPORT`, scale 1; `options` adds to (or overrides) that context's. */
export async function newPage(browser: Browser, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1, ...options })
  return context.newPage()
}

export type AxeImpact = 'minor' | 'moderate' | 'serious' | 'critical'

export interface AxeViolation {
  /** The rule, e.g. `color-contrast`. */
  id: string
  impact: AxeImpact | null
  /** What the rule asks, in a sentence. */
  help: string
  /** A CSS selector of each offending element (frames and shadow roots joined by spaces). */
  nodes: string[]
}

let axeSource: string | undefined

/**
 * Runs axe-core on the whole document of `page` and returns the violations of `impacts` (default serious and
 * critical), each reduced to what a failing `expect(...).toEqual([])` should print.
 *
 * axe's source is evaluated through the DevTools protocol rather than added as a `<script>` (`addScriptTag`): the
 * inspector's Content-Security-Policy (`default-src 'self'`) refuses inline scripts, which would make the
 * injection throw (and the page log a CSP violation), while an evaluation is not the page's to refuse. So the
 * page is checked as served, its CSP on.
 */
export async function axeViolations(
  page: Page,
  { impacts = ['serious', 'critical'] }: { impacts?: AxeImpact[] } = {},
): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => typeof (window as any).axe?.run === 'function'))) {
    axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
    // A script, not an expression: the trailing `0` gives the evaluation a value to return.
    await page.evaluate(`${axeSource}\n;0`)
  }
  const violations = await page.evaluate(async () => {
    const results = await (window as any).axe.run(document)
    return (results.violations as any[]).map((violation) => ({
      id: String(violation.id),
      impact: violation.impact ?? null,
      help: String(violation.help),
      nodes: (violation.nodes as Array<{ target: Array<string | string[]> }>).map((node) =>
        node.target.map((part) => (Array.isArray(part) ? part.join(' ') : part)).join(' '),
      ),
    }))
  })
  return violations.filter((violation) => violation.impact !== null && impacts.includes(violation.impact))
}

/**
 * Writes the page's viewport (`VIEWPORT`, one image pixel per CSS pixel) as `test-results/inspector/<name>.png`
 * under the repository root (not tracked: the README's pictures in docs/inspector are copies of the best ones, so
 * a test run leaves the tree clean); returns the file's path.
 */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  const folder = join(repoRoot, 'test-results/inspector')
  mkdirSync(folder, { recursive: true })
  const size = page.viewportSize()
  if (size?.width !== VIEWPORT.width || size.height !== VIEWPORT.height) await page.setViewportSize(VIEWPORT)
  const path = join(folder, `${name}.png`)
  await page.screenshot({ path, scale: 'css', animations: 'disabled', caret: 'hide' })
  return path
}
