import { writeFileSync } from 'node:fs'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type OidcIssuer, startOidcIssuer, TEST_AUDIENCE } from '../_oidc-issuer.ts'
import { rpc } from '../_rpc.ts'
import { SLOW } from '../_served-project.ts'
import { browserTestsEnabled } from './_browser.ts'
import { cleanUp, type DevServer, gatedAgentSource, gateFile, generateProject, writeAgent } from './_dev-project.ts'
import { closeAll, openInspector, startDevAndBrowser } from './_page.ts'

/**
 * The dev inspector under identity: when the agent's card declares authentication, its task feed (the list, the
 * live task lines, the event times) answers the tasks of the credential the page sends, as the agent's own
 * methods do, and refuses a page without one, saying so. Two callers named in the project's `.env`
 * (`A2A_API_KEY=alice:…,bob:…`), and a JWT of an OpenID Connect issuer in the page's credential field.
 */

const ALICE = { 'x-api-key': 'alice-key-1' }
const BOB = { 'x-api-key': 'bob-key-2' }

let project: string
let dev: DevServer
let browser: Browser | undefined
const pages: Page[] = []

/** The fixture agent with a card that asks for an API key (or `schemes`). */
const guardedAgent = (project: string, schemes = "['apiKey']") =>
  gatedAgentSource({ gate: gateFile(project) }).replace(
    'capabilities: {',
    `authentication: { schemes: ${schemes} },\n    capabilities: {`,
  )

/** Sends `text` as the caller of `headers`; the completed task's id. */
async function sendAs(headers: Record<string, string>, text: string, url = dev.url): Promise<string> {
  const message = {
    role: 'user',
    messageId: `m-${Math.random().toString(36).slice(2)}`,
    parts: [{ kind: 'text', text }],
  }
  const { body } = await rpc(url, 'message/send', { message }, { headers })
  expect(body.result?.status?.state, JSON.stringify(body)).toBe('completed')
  return body.result.id as string
}

/** A GET under the inspector: status and parsed body. */
async function inspectorGet(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${dev.url}__a2a/${path}`, { headers })
  return { status: response.status, body: await response.json() }
}

interface Frame {
  event: string
  data: any
}

/** The live channel as the page opens it (a GET with the page's credential headers): its frames, in order. */
async function openChannel(headers: Record<string, string>) {
  const frames: Frame[] = []
  let ended = false
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = httpRequest(`${dev.url}__a2a/events`, { headers, agent: false }, resolve)
    req.on('error', reject)
    req.end()
  })
  expect(response.statusCode).toBe(200)
  let text = ''
  response.setEncoding('utf8')
  response.on('data', (chunk: string) => {
    const blocks = (text + chunk).split('\n\n')
    text = blocks.pop()!
    for (const block of blocks) {
      const event = /^event: (.*)$/m.exec(block)?.[1]
      const data = /^data: (.*)$/m.exec(block)?.[1]
      if (event && data) frames.push({ event, data: JSON.parse(data) })
    }
  })
  response.on('close', () => (ended = true))
  return {
    frames,
    /** The task ids of its task lines. */
    taskIds: () => new Set(frames.filter((frame) => frame.event === 'task').map((frame) => frame.data.id as string)),
    ended: () => ended,
    close: () => response.destroy(),
  }
}

/** The task list's lines on `page` (the Tasks view), as their text. */
const taskList = (page: Page) => page.locator('.task-list')

/** What the task list says when the feed is refused ('' while it says nothing). */
const refusalOn = (page: Page) =>
  taskList(page)
    .getByRole('alert')
    .innerText()
    .catch(() => '')

async function openAs(key: string | undefined, url = dev.inspectorUrl): Promise<Page> {
  const page = await openInspector(browser!, url)
  pages.push(page)
  if (key !== undefined) await page.getByLabel('API key').fill(key)
  await page.getByRole('button', { name: 'Tasks', exact: true }).click()
  await page.getByRole('heading', { name: 'Tasks', exact: true }).waitFor()
  return page
}

describe.runIf(browserTestsEnabled())('the dev inspector shows each caller its own tasks', () => {
  beforeAll(async () => {
    project = await generateProject()
    writeAgent(project, guardedAgent(project))
    // As a developer names them: in the project's .env, which a2a dev reads.
    writeFileSync(join(project, '.env'), `A2A_API_KEY=alice:${ALICE['x-api-key']},bob:${BOB['x-api-key']}\n`)
    ;({ dev, browser } = await startDevAndBrowser(project))
  }, 3 * SLOW)

  afterAll(() => closeAll(pages, browser), 2 * SLOW)

  it("lists a caller's own tasks only, and refuses a missing or wrong key with the reason and no task", {
    timeout: 2 * SLOW,
  }, async () => {
    const alices = await sendAs(ALICE, 'listed for alice')
    const bobs = await sendAs(BOB, 'listed for bob')
    const asAlice = await inspectorGet('api/tasks', ALICE)
    expect(asAlice.status).toBe(200)
    const aliceIds = asAlice.body.tasks.map((line: { id: string }) => line.id)
    expect(aliceIds).toContain(alices)
    expect(aliceIds).not.toContain(bobs)
    expect(asAlice.body.total).toBe(aliceIds.length)
    const bobIds = (await inspectorGet('api/tasks', BOB)).body.tasks.map((line: { id: string }) => line.id)
    expect(bobIds).toContain(bobs)
    expect(bobIds).not.toContain(alices)

    const missing = await inspectorGet('api/tasks')
    expect(missing).toEqual({ status: 401, body: { error: 'Unauthorized: send X-API-Key: <key>' } })
    const wrong = await inspectorGet('api/tasks', { 'x-api-key': 'carol-guess' })
    expect(wrong).toEqual({ status: 401, body: { error: 'Unauthorized: invalid credentials' } })
  })

  it("answers event times for the caller's own task only: another's is a task it never saw", {
    timeout: 2 * SLOW,
  }, async () => {
    const bobs = await sendAs(BOB, 'timed for bob')
    const own = await inspectorGet(`api/tasks/${bobs}/times`, BOB)
    expect(own.status).toBe(200)
    expect(own.body.lastSeq).toBeGreaterThan(0)
    const another = await inspectorGet(`api/tasks/${bobs}/times`, ALICE)
    const never = await inspectorGet('api/tasks/no-such-task/times', ALICE)
    expect(another.status).toBe(404)
    expect(never.status).toBe(404)
    expect(another.body.error).toBe(never.body.error.replace('no-such-task', bobs))
    expect(JSON.stringify(another.body)).not.toContain('lastSeq')
    expect((await inspectorGet(`api/tasks/${bobs}/times`)).status).toBe(401)
  })

  it('sends each live channel the task lines of its own credential only, none to a channel without one', {
    timeout: 2 * SLOW,
  }, async () => {
    const alice = await openChannel(ALICE)
    const bob = await openChannel(BOB)
    const nobody = await openChannel({})
    try {
      await expect.poll(() => nobody.frames.some((frame) => frame.event === 'hello'), { timeout: SLOW }).toBe(true)
      const bobs = await sendAs(BOB, 'live for bob')
      const alices = await sendAs(ALICE, 'live for alice')
      // Lines go out in order: once each has heard its own later task, another's earlier one would have come.
      await expect.poll(() => alice.taskIds().has(alices), { timeout: SLOW }).toBe(true)
      await expect.poll(() => bob.taskIds().has(bobs), { timeout: SLOW }).toBe(true)
      await sendAs(BOB, 'bob again')
      await expect.poll(() => bob.taskIds().size, { timeout: SLOW }).toBe(2)
      expect([...alice.taskIds()]).toEqual([alices])
      // A save reaches every page, then the pages reconnect to be checked again: nothing of a task came before it.
      writeAgent(project, `${guardedAgent(project)}\n// saved again\n`)
      await expect.poll(() => nobody.frames.some((frame) => frame.event === 'load'), { timeout: SLOW }).toBe(true)
      expect(nobody.taskIds().size).toBe(0)
      expect([...alice.taskIds()]).toEqual([alices])
      await expect.poll(() => alice.ended() && bob.ended() && nobody.ended(), { timeout: SLOW }).toBe(true)
    } finally {
      for (const channel of [alice, bob, nobody]) channel.close()
    }
  })

  it('shows a push delivery about a task to its owner only, in either shape, and one about no task to every caller', {
    timeout: 2 * SLOW,
  }, async () => {
    const alices = await sendAs(ALICE, 'pushed for alice')
    const bobs = await sendAs(BOB, 'pushed for bob')
    const alice = await openChannel(ALICE)
    try {
      await expect.poll(() => alice.frames.some((frame) => frame.event === 'hello'), { timeout: SLOW }).toBe(true)
      // As the agent's webhooks get them: a v0.3 or platform config the Task, a v1.0 one a StreamResponse.
      const deliver = (path: string, body: unknown) =>
        fetch(`${dev.url}__a2a/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      expect((await deliver('push', { kind: 'task', id: bobs, status: { state: 'completed' } })).status).toBe(200)
      expect(
        (await deliver('push/v1', { statusUpdate: { taskId: alices, status: { state: 'completed' } } })).status,
      ).toBe(200)
      expect((await deliver('push', { note: 'about no task' })).status).toBe(200)
      const pushedTo = (channel: typeof alice) =>
        channel.frames.filter((frame) => frame.event === 'push').map((frame) => frame.data.taskId ?? 'none')
      await expect.poll(() => pushedTo(alice), { timeout: SLOW }).toEqual([alices, 'none'])

      const kept = async (headers: Record<string, string>) =>
        (await inspectorGet('api/push', headers)).body.deliveries.map(
          (delivery: { taskId?: string }) => delivery.taskId ?? 'none',
        )
      expect(await kept(ALICE)).toEqual([alices, 'none'])
      expect(await kept(BOB)).toEqual([bobs, 'none'])
      expect(await kept({})).toEqual(['none'])
      // Alice forgets what she sees; Bob's stays his.
      const forgotten = await fetch(`${dev.url}__a2a/api/push`, { method: 'DELETE', headers: ALICE })
      expect(await forgotten.json()).toEqual({ deliveries: [] })
      expect(await kept(BOB)).toEqual([bobs])
    } finally {
      alice.close()
    }
  })

  it("shows Alice's page her tasks only, live and after a reload, Bob's his, and a page without a key the refusal", {
    timeout: 4 * SLOW,
  }, async () => {
    const before = { alice: await sendAs(ALICE, 'alice before'), bob: await sendAs(BOB, 'bob before') }
    const alicePage = await openAs(ALICE['x-api-key'])
    const bobPage = await openAs(BOB['x-api-key'])
    const nobodyPage = await openAs(undefined)
    await expect.poll(() => taskList(alicePage).innerText(), { timeout: SLOW }).toContain('alice before')
    await expect.poll(() => taskList(bobPage).innerText(), { timeout: SLOW }).toContain('bob before')

    // Live: Bob's new task first, then Alice's; once hers shows, his would have shown before it.
    await sendAs(BOB, 'bob live')
    await sendAs(ALICE, 'alice live')
    await expect.poll(() => taskList(alicePage).innerText(), { timeout: SLOW }).toContain('alice live')
    await expect.poll(() => taskList(bobPage).innerText(), { timeout: SLOW }).toContain('bob live')
    expect(await taskList(alicePage).innerText()).not.toMatch(/bob/)
    expect(await taskList(bobPage).innerText()).not.toMatch(/alice/)

    // The page without a key says the list is refused, and why: not an empty list that looks like "no tasks".
    const refusal = taskList(nobodyPage).getByRole('alert')
    await expect.poll(() => refusal.innerText().catch(() => ''), { timeout: SLOW }).toContain('Unauthorized')
    expect(await refusal.innerText()).toContain('HTTP 401')
    expect(await taskList(nobodyPage).innerText()).not.toMatch(/alice|bob|No tasks yet/)
    expect(await nobodyPage.locator('.task-list li').count()).toBe(0)

    // After a reload of the page (the key stays for the tab): the same tasks, hers only.
    await alicePage.reload()
    await alicePage.getByRole('button', { name: 'Tasks', exact: true }).click()
    await expect.poll(() => taskList(alicePage).innerText(), { timeout: SLOW }).toContain('alice live')
    expect(await taskList(alicePage).innerText()).toContain('alice before')
    expect(await taskList(alicePage).innerText()).not.toMatch(/bob/)
    // Still live after the reload.
    await sendAs(BOB, 'bob after reload')
    await sendAs(ALICE, 'alice after reload')
    await expect.poll(() => taskList(alicePage).innerText(), { timeout: SLOW }).toContain('alice after reload')
    expect(await taskList(alicePage).innerText()).not.toMatch(/bob/)
    expect(before.alice).not.toBe(before.bob)
  })

  it("swaps the list with the key: Bob's key on Alice's page shows his tasks, not hers; a wrong key the refusal", {
    timeout: 3 * SLOW,
  }, async () => {
    await sendAs(ALICE, 'alice switch')
    await sendAs(BOB, 'bob switch')
    const page = await openAs(ALICE['x-api-key'])
    await expect.poll(() => taskList(page).innerText(), { timeout: SLOW }).toContain('alice switch')
    await page.getByLabel('API key').fill(BOB['x-api-key'])
    await expect.poll(() => taskList(page).innerText(), { timeout: SLOW }).toContain('bob switch')
    expect(await taskList(page).innerText()).not.toMatch(/alice/)
    // Live for Bob now.
    await sendAs(ALICE, 'alice while bob looks')
    await sendAs(BOB, 'bob while he looks')
    await expect.poll(() => taskList(page).innerText(), { timeout: SLOW }).toContain('bob while he looks')
    expect(await taskList(page).innerText()).not.toMatch(/alice/)
    await page.getByLabel('API key').fill('not-a-key')
    await expect.poll(() => refusalOn(page), { timeout: SLOW }).toContain('Unauthorized: invalid credentials')
    expect(await page.locator('.task-list li').count()).toBe(0)
  })
})

describe.runIf(browserTestsEnabled())('the dev inspector with a JWT in its credential field', () => {
  let issuer: OidcIssuer
  let oidcDev: DevServer
  let jwtBrowser: Browser | undefined

  beforeAll(async () => {
    issuer = await startOidcIssuer()
    const oidcProject = await generateProject()
    writeAgent(oidcProject, guardedAgent(oidcProject, "['oidc']"))
    const env = { A2A_OIDC_ISSUER: issuer.url, A2A_OIDC_AUDIENCE: TEST_AUDIENCE }
    ;({ dev: oidcDev, browser: jwtBrowser } = await startDevAndBrowser(oidcProject, env))
  }, 3 * SLOW)

  afterAll(async () => {
    await jwtBrowser?.close()
    await cleanUp()
    await issuer?.stop()
  }, 2 * SLOW)

  it("sends it as a bearer token: the page lists that subject's tasks, not another subject's", {
    timeout: 3 * SLOW,
  }, async () => {
    const alice = await issuer.mint({ sub: 'alice' })
    const bob = await issuer.mint({ sub: 'bob' })
    await sendAs({ authorization: `Bearer ${bob}` }, 'jwt bob', oidcDev.url)
    await sendAs({ authorization: `Bearer ${alice}` }, 'jwt alice', oidcDev.url)
    const page = await openInspector(jwtBrowser!, oidcDev.inspectorUrl)
    await page.getByLabel('Bearer token (JWT)').fill(alice)
    await page.getByRole('button', { name: 'Tasks', exact: true }).click()
    await expect.poll(() => taskList(page).innerText(), { timeout: SLOW }).toContain('jwt alice')
    expect(await taskList(page).innerText()).not.toContain('jwt bob')
    // A token the issuer did not sign is refused as the agent refuses it.
    await page.getByLabel('Bearer token (JWT)').fill(await issuer.mint({ sub: 'alice' }, { unpublished: true }))
    await expect.poll(() => refusalOn(page), { timeout: SLOW }).toContain('HTTP 401')
    expect(await page.locator('.task-list li').count()).toBe(0)
  })
})
