import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SLOW } from '../_served-project.ts'
import { axeViolations, browserTestsEnabled, newPage, saveScreenshot } from './_browser.ts'
import {
  type DevServer,
  gatedAgentSource,
  gateFile,
  generateProject,
  sendMessage,
  startDev,
  writeAgent,
} from './_dev-project.ts'
import {
  answerOf,
  chooseDialect,
  closeAll,
  lastExchange,
  openInspector as openPage,
  sendFromPage,
  startDevAndBrowser,
  stateOf,
} from './_page.ts'

/**
 * The dev inspector in Chromium, against a generated project under `a2a dev`: every view driven as a developer
 * would (labelled controls, clicks, typing), each state asserted in the page's DOM as it changes.
 */

let project: string
let gate: string
let dev: DevServer
let browser: Browser | undefined
const pages: Page[] = []

/** The gated agent with a card a check finds fault with: a description too short to choose the agent by. */
const agentSource = () =>
  gatedAgentSource({ gate, name: 'Inspector Fixture' }).replace(
    "description: 'Streams, asks and hangs on request, for the dev inspector tests'",
    "description: 'Test agent'",
  )

/** The inspector of the suite's dev server, once it knows the agent; closed after the suite. */
async function openInspector(): Promise<Page> {
  const page = await openPage(browser!, dev.inspectorUrl)
  pages.push(page)
  return page
}

/** The dialects the chat's cases run in: the platform's JSON-RPC, and A2A v1.0 over HTTP+JSON. */
const CHAT_DIALECTS = [
  ['platform', 'the platform dialect'],
  ['a2a-1.0-rest', 'A2A v1.0 REST'],
] as const

/** The timeline's checkbox that shows the raw wire, named for what the dialect sends. */
const rawCheckbox = (page: Page, dialect = 'platform') =>
  page.locator('.timeline').getByRole('checkbox', {
    name: `Show raw ${dialect === 'a2a-1.0-rest' ? 'HTTP requests' : 'JSON-RPC'} and SSE frames`,
  })

async function expectNoSeriousViolations(page: Page): Promise<void> {
  expect(await axeViolations(page)).toEqual([])
}

describe.runIf(browserTestsEnabled())('dev inspector in a browser', () => {
  beforeAll(async () => {
    project = await generateProject()
    gate = gateFile(project)
    writeAgent(project, agentSource())
    ;({ dev, browser } = await startDevAndBrowser(project))
  }, 3 * SLOW)

  afterAll(() => closeAll(pages, browser), 2 * SLOW)

  it('has an accessibility check that finds what it should: a button without a name on a page is critical', {
    timeout: SLOW,
  }, async () => {
    const page = await newPage(browser!)
    pages.push(page)
    await page.setContent(
      '<!doctype html><html lang="en"><head><title>bad</title></head><body><main><h1>bad</h1><button id="empty"></button></main></body></html>',
    )
    expect(await axeViolations(page)).toContainEqual(
      expect.objectContaining({ id: 'button-name', impact: 'critical', nodes: ['#empty'] }),
    )
  })

  it('is announced at start-up and serves its page under /__a2a/, and nothing else there', {
    timeout: SLOW,
  }, async () => {
    expect(dev.output()).toContain(`Inspector at ${dev.inspectorUrl}`)
    const page = await fetch(dev.inspectorUrl)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'")
    expect(await page.text()).toContain('<div id="app">')
    const unknown = await fetch(`${dev.inspectorUrl}nothing-here.js`)
    expect(unknown.status).toBe(404)
    // A page on another site may not read the inspector's live channel.
    const foreign = await fetch(`${dev.inspectorUrl}events`, { headers: { origin: 'https://evil.example' } })
    expect(foreign.status).toBe(403)
  })

  it('shows the card as each dialect gets it, with the findings of `a2a card validate` linked to their fields', {
    timeout: 2 * SLOW,
  }, async () => {
    const page = await openInspector()
    await page.getByRole('button', { name: 'Card', exact: true }).click()
    const findings = page.getByRole('list', { name: 'Card findings' })
    await expect.poll(() => findings.innerText(), { timeout: SLOW }).toContain('the description is very short')
    // The platform card: `url` at the top level.
    await expect
      .poll(() => page.locator('.card-view .json-tree').innerText(), { timeout: SLOW })
      .toContain('"Test agent"')
    await saveScreenshot(page, 'card')
    await page.getByRole('radio', { name: 'A2A v1.0' }).check()
    // v1.0's card lists its interfaces with the protocol version; v0.3's names its preferred transport.
    await expect
      .poll(() => page.locator('.card-view .json-tree').innerText(), { timeout: SLOW })
      .toContain('protocolVersion')
    // v0.3's card says its protocol version at the top level, which v1.0's does not.
    expect(await page.locator('.card-view .json-tree').innerText()).not.toContain('protocolVersion: "0.3.0"')
    await page.getByRole('radio', { name: 'A2A v0.3' }).check()
    await expect
      .poll(() => page.locator('.card-view .json-tree').innerText(), { timeout: SLOW })
      .toContain('protocolVersion: "0.3.0"')
    // The finding's link goes to its field, in the platform card, and focuses it.
    await findings.getByRole('link', { name: 'description' }).click()
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('card-description')
    await expectNoSeriousViolations(page)
  })

  for (const [dialect, named] of CHAT_DIALECTS)
    it(`streams an answer chunk by chunk as the agent writes it, in ${named}`, { timeout: 2 * SLOW }, async () => {
      rmSync(gate, { force: true })
      const page = await openInspector()
      await chooseDialect(page, dialect)
      await sendFromPage(page, 'stream')
      // The first chunk shows while the agent still holds the second (it waits for the gate).
      await expect.poll(() => answerOf(page).catch(() => ''), { timeout: SLOW }).toContain('alpha')
      expect(await answerOf(page)).not.toContain('omega')
      expect(await stateOf(page)).toBe('working')
      // The working update with a message shows as progress.
      expect(await lastExchange(page).getByRole('list', { name: 'Progress' }).innerText()).toContain(
        'alpha sent, omega waits for the gate',
      )
      if (dialect === 'platform') await saveScreenshot(page, 'streaming')
      writeFileSync(gate, '')
      await expect.poll(() => answerOf(page), { timeout: SLOW }).toContain('alpha omega')
      await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('completed')
      await expectNoSeriousViolations(page)
    })

  it("renders the agent's Markdown but never its HTML: no element, style, form or script link reaches the page", {
    timeout: 2 * SLOW,
  }, async () => {
    const page = await openInspector()
    await sendFromPage(page, 'markup')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('completed')
    const answer = lastExchange(page).locator('.artifact')
    // Markdown itself renders: a heading, bold text, a safe link opening beside the inspector.
    expect(await answer.locator('h1').innerText()).toBe('Markup')
    expect(await answer.locator('strong').first().innerText()).toBe('bold')
    expect(await answer.locator('a[href="https://example.com/"]').getAttribute('target')).toBe('_blank')
    // Every attempt shows as text, and none became an element.
    for (const selector of [
      'img',
      'style',
      'form',
      'script',
      'iframe',
      'a[href^="javascript"]',
      'a[href^="data"]',
      '[onerror]',
    ]) {
      expect(await answer.locator(selector).count(), selector).toBe(0)
    }
    expect(await answer.innerText()).toContain('onerror')
    // The page is unchanged: nothing the agent sent restyled or replaced it.
    expect(await page.getByRole('button', { name: 'Send', exact: true }).isVisible()).toBe(true)
  })

  for (const [dialect, named] of CHAT_DIALECTS)
    it(`answers an input-required question in place, on the same task, which then completes, in ${named}`, {
      timeout: 2 * SLOW,
    }, async () => {
      const page = await openInspector()
      await chooseDialect(page, dialect)
      await sendFromPage(page, 'ask')
      await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('input-required')
      const asking = lastExchange(page)
      expect(await asking.locator('.question').innerText()).toContain('What should I answer?')
      const taskId = await asking.getAttribute('data-task-id')
      await asking.getByRole('textbox', { name: 'Your answer' }).fill('blue')
      await asking.getByRole('button', { name: 'Answer' }).click()
      await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('completed')
      expect(await answerOf(page)).toContain('Answer: blue')
      expect(await lastExchange(page).getAttribute('data-task-id')).toBe(taskId)
      // Answered: the question's form is gone.
      expect(await page.getByRole('textbox', { name: 'Your answer' }).count()).toBe(0)
    })

  it('sends a data part and a file to the chosen skill, and shows a data answer as a JSON tree and a file answer as a download', {
    timeout: 2 * SLOW,
  }, async () => {
    const page = await openInspector()
    await page.getByRole('combobox', { name: 'Skill' }).selectOption('fixture')
    await page.getByText('Data part (JSON)').click()
    await page
      .getByRole('textbox', { name: 'JSON value sent as a data part' })
      .fill('{"colour": "blue", "sizes": [1, 2]}')
    await page
      .getByLabel('File')
      .setInputFiles({ name: 'note.txt', mimeType: 'text/plain', buffer: Buffer.from('a note') })
    await sendFromPage(page, 'parts')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('completed')
    const received = lastExchange(page).getByRole('article', { name: 'received' })
    const tree = await received.locator('.json-tree').innerText()
    for (const shown of ['"text"', '"data"', '"file note.txt"', 'colour: "blue"', 'skill: "fixture"'])
      expect(tree).toContain(shown)
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      lastExchange(page).getByRole('link', { name: 'Download reply.txt' }).click(),
    ])
    expect(download.suggestedFilename()).toBe('reply.txt')
    expect(readFileSync(await download.path()).toString()).toBe('hello back')
    // A bad data part is refused on the page, naming the problem, and nothing is sent.
    const sent = await page.locator('.exchange').count()
    await page.getByRole('textbox', { name: 'JSON value sent as a data part' }).fill('{not json')
    await sendFromPage(page, 'parts')
    expect(await page.getByRole('alert').filter({ hasText: 'The data part is not JSON' }).count()).toBe(1)
    expect(await page.locator('.exchange').count()).toBe(sent)
  })

  it('continues the context from message to message until a new one is started', { timeout: 2 * SLOW }, async () => {
    const page = await openInspector()
    const contextOf = async () => (await page.locator('.chat-head').innerText()).match(/Context: ([0-9a-f-]{36})/)?.[1]
    await sendFromPage(page, 'first')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('completed')
    await expect.poll(contextOf, { timeout: SLOW }).toBeDefined()
    const first = await contextOf()
    await sendFromPage(page, 'second')
    await expect.poll(() => answerOf(page), { timeout: SLOW }).toContain('Echo: second')
    expect(await contextOf()).toBe(first)
    await page.getByRole('button', { name: 'New context' }).click()
    expect(await page.locator('.exchange').count()).toBe(0)
    expect(await contextOf()).toBeUndefined()
    await sendFromPage(page, 'third')
    await expect.poll(() => answerOf(page), { timeout: SLOW }).toContain('Echo: third')
    await expect.poll(contextOf, { timeout: SLOW }).toBeDefined()
    expect(await contextOf()).not.toBe(first)
  })

  for (const [dialect, named] of CHAT_DIALECTS)
    it(`cancels a running task, which ends as canceled, in ${named}`, { timeout: 2 * SLOW }, async () => {
      const page = await openInspector()
      await chooseDialect(page, dialect)
      await sendFromPage(page, 'hang')
      await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('working')
      await lastExchange(page).getByRole('button', { name: 'Cancel task' }).click()
      await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('canceled')
      expect(await lastExchange(page).getByRole('button', { name: 'Cancel task' }).count()).toBe(0)
    })

  it("shows each dialect's raw request and SSE frames on the task's timeline", { timeout: 3 * SLOW }, async () => {
    const page = await openInspector()
    const expected = {
      platform: ['"method": "message/stream"', '"method":"tasks/statusUpdate"', '"state":"completed"'],
      'a2a-1.0': ['"method": "SendStreamingMessage"', '"role": "ROLE_USER"', '"statusUpdate"', 'TASK_STATE_COMPLETED'],
      'a2a-0.3': ['"method": "message/stream"', '"kind":"status-update"', '"state":"completed"'],
      // REST: the method and path, the v1.0 request bare, each frame's data a bare StreamResponse.
      'a2a-1.0-rest': [
        'POST /message:stream',
        'A2A-Version: 1.0',
        'Content-Type: application/a2a+json',
        '"role": "ROLE_USER"',
        'data: {"statusUpdate"',
        'TASK_STATE_COMPLETED',
      ],
    }
    for (const [dialect, needles] of Object.entries(expected)) {
      await page.getByRole('button', { name: 'Chat', exact: true }).click()
      await chooseDialect(page, dialect)
      await sendFromPage(page, `hello in ${dialect}`)
      await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('completed')
      await lastExchange(page)
        .getByRole('button', { name: /Timeline of task/ })
        .click()
      const timeline = page.locator('.timeline')
      await rawCheckbox(page, dialect).check()
      const text = await timeline.innerText()
      for (const needle of needles) expect(text, `${dialect} timeline`).toContain(needle)
      // Offsets from the request, and the updates read from the frames.
      expect(text).toMatch(/\+\d+ ms/)
      expect(text).toContain('state → completed')
      // Each dialect in its own words only: v1.0's enum names nowhere else, `kind` nowhere in v1.0.
      if (dialect.startsWith('a2a-1.0')) expect(text).not.toContain('"kind"')
      else expect(text).not.toContain('TASK_STATE_')
      // REST has no JSON-RPC envelope, in the request or the frames.
      if (dialect === 'a2a-1.0-rest')
        for (const envelope of ['"jsonrpc"', '"method"']) expect(text).not.toContain(envelope)
      if (dialect === 'a2a-1.0') await saveScreenshot(page, 'timeline')
    }
    await expectNoSeriousViolations(page)
  })

  it('offers REST only when the v1.0 card lists an HTTP+JSON interface, and sends to the address it lists', {
    timeout: 3 * SLOW,
  }, async () => {
    /**
     * A page whose A2A cards have their HTTP+JSON interface moved to `restUrl`, or removed (undefined); `saved`, the
     * dialect the page chose in an earlier visit.
     */
    async function pageWithCards(restUrl: string | undefined, saved?: string): Promise<Page> {
      const page = await newPage(browser!)
      pages.push(page)
      page.setDefaultTimeout(SLOW)
      if (saved) await page.addInitScript((id) => localStorage.setItem('a2a-inspector-dialect', id), saved)
      await page.route('**/.well-known/agent-card.json', async (route) => {
        const response = await route.fetch()
        const card = await response.json()
        card.supportedInterfaces = card.supportedInterfaces
          ?.map((entry: { protocolBinding: string }) =>
            entry.protocolBinding !== 'HTTP+JSON' ? entry : restUrl && { ...entry, url: restUrl },
          )
          .filter(Boolean)
        await route.fulfill({ response, json: card })
      })
      await page.goto(dev.inspectorUrl)
      await page.getByRole('heading', { level: 1, name: /Inspector Fixture/ }).waitFor()
      return page
    }

    // Listed at another path: offered, and the calls go there.
    const moved = await pageWithCards(`${dev.url}rest`)
    const paths: string[] = []
    await moved.route('**/rest/**', (route) => {
      const url = new URL(route.request().url())
      paths.push(`${route.request().method()} ${url.pathname}`)
      // The agent serves REST at its root: this stands for an agent serving it under /rest.
      return route.continue({ url: url.href.replace('/rest/', '/') })
    })
    await chooseDialect(moved, 'a2a-1.0-rest')
    await sendFromPage(moved, 'hello at the listed address')
    await expect.poll(() => stateOf(moved), { timeout: SLOW }).toBe('completed')
    expect(paths).toContain('POST /rest/message:stream')

    // Not listed: not offered, and REST chosen in an earlier visit becomes A2A v1.0 in JSON-RPC.
    const unlisted = await pageWithCards(undefined, 'a2a-1.0-rest')
    const select = unlisted.getByRole('combobox', { name: 'Dialect' })
    await expect.poll(() => select.inputValue(), { timeout: SLOW }).toBe('a2a-1.0')
    expect(await unlisted.locator('#dialect option').allInnerTexts()).toEqual(['Platform', 'A2A v1.0', 'A2A v0.3'])
    expect(await select.getAttribute('title')).not.toContain('REST')
    await sendFromPage(unlisted, 'hello without REST')
    await expect.poll(() => stateOf(unlisted), { timeout: SLOW }).toBe('completed')
  })

  for (const [dialect, named] of CHAT_DIALECTS)
    it(`lists tasks live, those of other clients too, and replays their events in ${named}`, {
      timeout: 2 * SLOW,
    }, async () => {
      const page = await openInspector()
      await chooseDialect(page, dialect)
      await page.getByRole('button', { name: 'Tasks', exact: true }).click()
      await page.getByRole('heading', { name: 'Tasks', exact: true }).waitFor()
      const list = page.locator('.task-list')
      const said = `from another client, replayed in ${dialect}`
      const { body } = await sendMessage(dev.url, said)
      expect(body.result?.status?.state).toBe('completed')
      await expect.poll(() => list.innerText(), { timeout: SLOW }).toContain(said)
      await list.getByRole('button', { name: new RegExp(said) }).click()
      await expect.poll(() => page.locator('.task-detail').innerText(), { timeout: SLOW }).toContain(`Echo: ${said}`)
      // Its timeline, from the events the agent keeps of it, in the chosen dialect's frames.
      await page.getByRole('button', { name: 'Replay its events' }).click()
      const timeline = page.locator('.timeline')
      await expect.poll(() => timeline.innerText().catch(() => ''), { timeout: SLOW }).toContain('state → completed')
      await rawCheckbox(page, dialect).check()
      const text = await timeline.innerText()
      const taskId = body.result.id as string
      if (dialect === 'platform') {
        expect(text).toContain('"method": "tasks/resubscribe"')
        expect(text).toContain('"method":"tasks/artifactUpdate"')
      } else {
        expect(text).toContain(`POST /tasks/${taskId}:subscribe`)
        expect(text).toContain('data: {"artifactUpdate"')
      }
      expect(text).toContain(`Echo: ${said}`)
    })

  it('receives push notifications at its built-in webhook and shows each delivery', { timeout: 2 * SLOW }, async () => {
    const page = await openInspector()
    await page.getByRole('checkbox', { name: 'Push notifications to the inspector' }).check()
    await sendFromPage(page, 'push me')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('completed')
    const taskId = (await lastExchange(page).getAttribute('data-task-id'))!
    await page.getByRole('button', { name: 'Push', exact: true }).click()
    const deliveries = page.getByRole('list', { name: 'Deliveries, newest first' })
    // The last notification is the completed task; each shows its headers (the token the page set) and payload.
    await expect.poll(() => deliveries.innerText(), { timeout: SLOW }).toContain('completed')
    const text = await deliveries.innerText()
    expect(text).toContain(taskId)
    expect(text).toContain('x-a2a-notification-token')
    expect(text).toContain('a2a-inspector')
    await saveScreenshot(page, 'push')
    await expectNoSeriousViolations(page)
  })

  it('shows a save that does not load as file:line and cause, live, and clears it on a good save', {
    timeout: 3 * SLOW,
  }, async () => {
    const page = await openInspector()
    await sendFromPage(page, 'before the break')
    await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('completed')
    const good = agentSource()
    const lines = good.split('\n')
    const brokenLine = lines.findIndex((line) => line.includes("if (text === 'ask')")) + 1
    lines[brokenLine - 1] = "    if (text === 'ask' {"
    writeAgent(project, lines.join('\n'))
    const banner = page.getByTestId('load-failure')
    await expect
      .poll(() => banner.innerText().catch(() => ''), { timeout: SLOW })
      .toContain(`src/agent.ts:${brokenLine}:`)
    expect(await page.getByRole('alert').innerText()).toContain('The agent does not load')
    await saveScreenshot(page, 'load-failure')
    await expectNoSeriousViolations(page)
    writeAgent(project, good)
    await expect
      .poll(
        () =>
          page
            .getByTestId('reloaded')
            .innerText()
            .catch(() => ''),
        { timeout: SLOW },
      )
      .toMatch(/Reloaded in \d+ ms \(src\/agent\.ts\)/)
    expect(await banner.count()).toBe(0)
    // The conversation on the page survived the reloads, and the agent answers again.
    await sendFromPage(page, 'after the fix')
    await expect.poll(() => answerOf(page), { timeout: SLOW }).toContain('Echo: after the fix')
    expect(await page.locator('.exchange').count()).toBe(2)
  })

  it('follows the tasks of an agent that does not stream: the answer read until it settles, a running task canceled', {
    timeout: 3 * SLOW,
  }, async () => {
    writeAgent(project, agentSource().replace('capabilities: { streaming: true,', 'capabilities: { streaming: false,'))
    try {
      const page = await openInspector()
      await expect
        .poll(
          () =>
            page.evaluate(() =>
              fetch('/.well-known/agent.json')
                .then((r) => r.json())
                .then((c) => c.capabilities.streaming),
            ),
          { timeout: SLOW },
        )
        .toBe(false)
      await page.reload()
      await page.getByRole('heading', { level: 1, name: /Inspector Fixture/ }).waitFor()
      await sendFromPage(page, 'plain answer')
      await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('completed')
      expect(await answerOf(page)).toContain('Echo: plain answer')
      // A task that runs on: the send answered at once, so the page knows the task and can cancel it.
      await sendFromPage(page, 'hang')
      await lastExchange(page).getByRole('button', { name: 'Cancel task' }).click()
      await expect.poll(() => stateOf(page), { timeout: SLOW }).toBe('canceled')
      await lastExchange(page)
        .getByRole('button', { name: /Timeline of task/ })
        .click()
      await rawCheckbox(page).check()
      const timeline = await page.locator('.timeline').innerText()
      expect(timeline).toContain('"blocking": false')
      expect(timeline).toContain('tasks/cancel')
    } finally {
      writeAgent(project, agentSource())
    }
  })

  it('sends the credential an agent with authentication asks for, and keeps a refused message to send again', {
    timeout: 3 * SLOW,
  }, async () => {
    const guarded = await generateProject()
    writeAgent(
      guarded,
      agentSource().replace('capabilities: {', "authentication: { schemes: ['bearer'] },\n    capabilities: {"),
    )
    const server = await startDev(guarded, { A2A_BEARER_TOKEN: 'inspector-secret' })
    const page = await newPage(browser!)
    pages.push(page)
    page.setDefaultTimeout(SLOW)
    await page.goto(server.inspectorUrl)
    const token = page.getByLabel('Bearer token')
    await token.waitFor()
    await sendFromPage(page, 'let me in')
    await expect
      .poll(
        () =>
          lastExchange(page)
            .locator('.error')
            .innerText()
            .catch(() => ''),
        { timeout: SLOW },
      )
      .toMatch(/401|[Uu]nauthori[sz]ed|credential/)
    // Refused: what was typed is still there.
    expect(await page.getByRole('textbox', { name: 'Message', exact: true }).inputValue()).toBe('let me in')
    await token.fill('inspector-secret')
    await page.getByRole('button', { name: 'Send', exact: true }).click()
    await expect.poll(() => answerOf(page).catch(() => ''), { timeout: SLOW }).toContain('Echo: let me in')
    expect(await page.getByRole('textbox', { name: 'Message', exact: true }).inputValue()).toBe('')
    await expectNoSeriousViolations(page)
    await page.context().close()
    pages.splice(pages.indexOf(page), 1)
    await server.stop()
  })
})
