import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SLOW } from '../_served-project.ts'
import { a2aBin, freePort } from '../_support.ts'
import { agentModule, makeAgentsProject, sendText } from '../cli/_agents-project.ts'
import { browserTestsEnabled, launchBrowser, newPage } from './_browser.ts'
import { answerOf, sendFromPage } from './_page.ts'

/**
 * The dev inspector of a folder of agents in Chromium: `a2a dev` serving a planner and a writer, each with its page
 * (its card, its tasks, its send box), and the switch between them.
 */

let project: string
let child: ChildProcess | undefined
let url: string
let browser: Browser | undefined
const pages: Page[] = []

async function open(path: string, agent: RegExp): Promise<Page> {
  const page = await newPage(browser!)
  pages.push(page)
  page.setDefaultTimeout(SLOW)
  await page.goto(`${url}${path}`)
  await page.getByRole('heading', { level: 1, name: agent }).waitFor()
  return page
}

const taskTitles = async (page: Page) => {
  await page.getByRole('button', { name: 'Tasks', exact: true }).click()
  return page.getByRole('list', { name: 'Tasks, newest first' }).locator('.task-title').allInnerTexts()
}

describe.runIf(browserTestsEnabled())('dev inspector of a folder of agents', () => {
  beforeAll(async () => {
    project = makeAgentsProject('a2a-inspector-agents-', {
      'planner.ts': agentModule({ name: 'planner', answer: 'planned' }),
      'writer.ts': agentModule({ name: 'writer', answer: 'written' }),
    })
    const port = await freePort()
    child = spawn(process.execPath, [a2aBin, 'dev'], {
      cwd: project,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', A2A_STORE: '' },
    })
    let output = ''
    child.stdout!.on('data', (chunk) => (output += chunk))
    child.stderr!.on('data', (chunk) => (output += chunk))
    url = `http://127.0.0.1:${port}/`
    browser = await launchBrowser()
    // Bounded: a dev server that never says it listens fails the suite rather than hanging it.
    for (const until = Date.now() + SLOW; !output.includes('Dev server at'); ) {
      if (Date.now() > until || child.exitCode !== null) throw new Error(`a2a dev did not start:\n${output}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }, 3 * SLOW)

  afterAll(async () => {
    for (const page of pages) await page.context().close()
    await browser?.close()
    if (child?.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
    rmSync(project, { recursive: true, force: true })
  }, 2 * SLOW)

  it("opens the first agent's page from /__a2a/, lists the agents, and sends to that agent", {
    timeout: 2 * SLOW,
  }, async () => {
    const page = await open('__a2a/', /planner agent/)
    expect(new URL(page.url()).pathname).toBe('/planner/__a2a/')
    const agents = page.getByRole('navigation', { name: 'Agents' })
    expect(await agents.getByRole('link').allInnerTexts()).toEqual(['planner', 'writer'])
    expect(await agents.getByRole('link', { name: 'planner' }).getAttribute('aria-current')).toBe('page')
    await sendFromPage(page, 'plan a trip')
    await expect.poll(() => answerOf(page), { timeout: SLOW }).toBe('planned loads=1')
    await expect.poll(() => taskTitles(page), { timeout: SLOW }).toEqual(['plan a trip'])
  })

  it('switches to the other agent: its card, its tasks only, its send box', { timeout: 2 * SLOW }, async () => {
    // A task of the writer's made elsewhere, so its page has one of its own to list.
    expect((await sendText(`${url}writer`, 'write a poem')).status).toBe(200)
    const page = await open('planner/__a2a/', /planner agent/)
    await page.getByRole('navigation', { name: 'Agents' }).getByRole('link', { name: 'writer' }).click()
    await page.getByRole('heading', { level: 1, name: /writer agent/ }).waitFor()
    expect(new URL(page.url()).pathname).toBe('/writer/__a2a/')
    await expect.poll(() => taskTitles(page), { timeout: SLOW }).toEqual(['write a poem'])
    await page.getByRole('button', { name: 'Chat', exact: true }).click()
    await sendFromPage(page, 'write more')
    await expect.poll(() => answerOf(page), { timeout: SLOW }).toBe('written loads=1')
    await expect.poll(() => taskTitles(page), { timeout: SLOW }).toEqual(['write more', 'write a poem'])
    await page.getByRole('button', { name: 'Card', exact: true }).click()
    await expect.poll(() => page.locator('main').innerText(), { timeout: SLOW }).toContain('writer agent')
  })
})
