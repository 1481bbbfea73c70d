import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createA2AApp } from 'a2a-runtime'
import { afterEach, describe, expect, it } from 'vitest'
import { addressPolicy, guardedLookup, refusedWebhook } from '../../runtime/src/push/_address-guard.ts'
import { MemoryPushConfigs } from '../../runtime/src/push/_configs.ts'
import { PushDelivery } from '../../runtime/src/push/_delivery.ts'
import type { TaskEvent } from '../../runtime/src/types.ts'
import { agent } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { inProcess, nodeServer } from './_transports.ts'
import { startReceiver } from './_webhook.ts'

const V1 = { 'a2a-version': '1.0' }
const withPush = { card: { capabilities: { pushNotifications: true } } }
const pushAgent = agent((_ctx, task) => task.complete(), withPush)
const v1Message = (text: string) => ({
  message: { role: 'ROLE_USER', messageId: `m-${Math.random()}`, parts: [{ text }] },
})

/** Webhooks the guard refuses with its default settings, and the words the refusal names. */
const REFUSED: Array<[string, RegExp]> = [
  ['http://example.com/hook', /must be an https: URL \(http: webhooks are refused/],
  ['ftp://example.com/hook', /must be an https: URL \(got ftp:\)/],
  ['not a url', /must be an absolute https: URL/],
  ['https://user:pass@example.com/hook', /must not carry credentials/],
  ['https://127.0.0.1/hook', /127\.0\.0\.1 is a loopback, private, link-local or reserved address/],
  ['https://127.1.2.3:8443/hook', /127\.1\.2\.3 is a loopback/],
  ['https://2130706433/hook', /127\.0\.0\.1 is a loopback/], // decimal 127.0.0.1
  ['https://0x7f.1/hook', /127\.0\.0\.1 is a loopback/], // hex and short forms
  ['https://localhost/hook', /localhost resolves to a loopback, private, link-local or reserved address$/],
  ['https://0.0.0.0/hook', /0\.0\.0\.0 is a loopback/],
  ['https://10.20.30.40/hook', /10\.20\.30\.40 is a loopback, private/],
  ['https://172.16.5.4/hook', /172\.16\.5\.4 is a loopback, private/],
  ['https://192.168.1.1/hook', /192\.168\.1\.1 is a loopback, private/],
  ['https://100.64.0.1/hook', /100\.64\.0\.1 is a loopback, private/],
  ['https://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a loopback, private, link-local/],
  ['https://metadata.google.internal/computeMetadata/v1/', /metadata\.google\.internal is a cloud metadata service/],
  ['https://[::1]/hook', /::1 is a loopback/],
  ['https://[::ffff:127.0.0.1]/hook', /::ffff:7f00:1 is a loopback/],
  ['https://[fe80::1]/hook', /fe80::1 is a loopback, private, link-local/],
  ['https://[fd00:ec2::254]/hook', /fd00:ec2::254 is a loopback, private/],
  ['https://no-such-host.invalid/hook', /host no-such-host\.invalid could not be resolved/],
]

describe('the SSRF guard at configuration time', () => {
  it.each(REFUSED)('refuses %s with -32602 naming the field, and starts no task', async (url, reason) => {
    const target = await inProcess.start(pushAgent)
    const sent = await target.rpc(
      'SendMessage',
      { ...v1Message('x'), configuration: { taskPushNotificationConfig: { url } } },
      { headers: V1 },
    )
    expect(sent.body.error.code).toBe(-32602)
    expect(sent.body.error.message).toMatch(/`params\.configuration\.taskPushNotificationConfig\.url` /)
    expect(sent.body.error.message).toMatch(reason)
    expect((await target.rpc('ListTasks', {}, { headers: V1 })).body.result.tasks).toEqual([])

    const taskId = (await target.rpc('SendMessage', v1Message('x'), { headers: V1 })).body.result.task.id
    const created = await target.rpc('CreateTaskPushNotificationConfig', { taskId, url }, { headers: V1 })
    expect(created.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(reason) })
    expect(
      (await target.rpc('ListTaskPushNotificationConfigs', { taskId }, { headers: V1 })).body.result.configs,
    ).toEqual([])
  })

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:93.184.216.34', '172.32.0.1', '192.169.0.1'])(
    'accepts a public address such as %s',
    async (address) => {
      const resolve = async () => [{ address, family: address.includes(':') ? 6 : 4 }]
      expect(
        await refusedWebhook(new URL('https://hooks.example.com/a2a'), addressPolicy([], false), resolve),
      ).toBeUndefined()
    },
  )

  // Every range of the guard, by an address inside it and its edges, so dropping or narrowing any one range
  // fails here. (The table above goes through the app; these go straight to the check, which is what it runs.)
  it.each([
    ['"this network" 0.0.0.0/8', ['0.0.0.1', '0.255.255.255']],
    ['private 10.0.0.0/8', ['10.0.0.0', '10.255.255.255']],
    ['shared (carrier-grade NAT) 100.64.0.0/10', ['100.64.0.0', '100.100.1.1', '100.127.255.255']],
    ['loopback 127.0.0.0/8', ['127.0.0.1', '127.255.255.255']],
    ['link-local 169.254.0.0/16', ['169.254.0.0', '169.254.255.255']],
    ['private 172.16.0.0/12', ['172.16.0.0', '172.31.255.255']],
    ['IETF protocol assignments 192.0.0.0/24 (Oracle metadata)', ['192.0.0.0', '192.0.0.192', '192.0.0.255']],
    ['documentation 192.0.2.0/24', ['192.0.2.0', '192.0.2.255']],
    ['private 192.168.0.0/16', ['192.168.0.0', '192.168.255.255']],
    ['benchmarking 198.18.0.0/15', ['198.18.0.0', '198.19.255.255']],
    ['documentation 198.51.100.0/24', ['198.51.100.0', '198.51.100.255']],
    ['documentation 203.0.113.0/24', ['203.0.113.0', '203.0.113.255']],
    ['multicast 224.0.0.0/4', ['224.0.0.1', '239.255.255.255']],
    ['reserved and broadcast 240.0.0.0/4', ['240.0.0.1', '255.255.255.255']],
    [
      'IPv4-compatible ::/96 (the unspecified ::, loopback ::1), even of a public IPv4 address',
      ['::', '::1', '::127.0.0.1', '::8.8.8.8', '::ffff:ffff'],
    ],
    [
      'SIIT IPv4-translated ::ffff:0:0:0/96, even of a public IPv4 address',
      ['::ffff:0:0.0.0.0', '::ffff:0:127.0.0.1', '::ffff:0:8.8.8.8', '::ffff:0:255.255.255.255'],
    ],
    ['IPv4-mapped IPv6 of a private address', ['::ffff:10.1.2.3', '::ffff:169.254.169.254']],
    [
      'NAT64 64:ff9b::/96, even of a public IPv4 address',
      ['64:ff9b::7f00:1', '64:ff9b::808:808', '64:ff9b::ffff:ffff'],
    ],
    ['local-use NAT64 64:ff9b:1::/48', ['64:ff9b:1::1', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff']],
    ['Teredo 2001::/32', ['2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:0:ffff:ffff:ffff:ffff:ffff:ffff']],
    [
      '6to4 2002::/16, even of a public IPv4 address',
      ['2002:7f00:1::1', '2002:808:808::1', '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
    ],
    ['deprecated site-local fec0::/10', ['fec0::1', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
    ['discard 100::/64', ['100::', '100::ffff:ffff:ffff:ffff']],
    ['documentation 2001:db8::/32', ['2001:db8::1', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff']],
    ['unique local fc00::/7', ['fc00::1', 'fd00:ec2::254', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
    ['IPv6 link-local fe80::/10', ['fe80::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
    ['IPv6 multicast ff00::/8', ['ff02::1', 'ff0e::101', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ] as const)(
    'refuses every address of the %s range, at its edges too, as a literal and as what a name resolves to',
    async (_range, addresses) => {
      const policy = addressPolicy([], false)
      for (const address of addresses) {
        const literal = new URL(address.includes(':') ? `https://[${address}]/hook` : `https://${address}/hook`)
        expect(await refusedWebhook(literal, policy), address).toMatch(
          / is a loopback, private, link-local or reserved address$/,
        )
        const resolve = async () => [{ address, family: address.includes(':') ? 6 : 4 }]
        expect(await refusedWebhook(new URL('https://hooks.example.com/a2a'), policy, resolve), address).toBe(
          'hooks.example.com resolves to a loopback, private, link-local or reserved address',
        )
      }
    },
  )

  // The public neighbours of the ranges above: a range written wider than it is would refuse them.
  it.each([
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '192.0.1.0',
    '192.0.3.0',
    '192.167.255.255',
    '198.17.255.255',
    '198.20.0.0',
    '198.51.99.255',
    '198.51.101.0',
    '203.0.112.255',
    '203.0.114.0',
    '223.255.255.255',
    '2001:4860:4860::8888',
    '2003:de::1',
    '64:ff9b:2::1',
    '2a00:1450:4001::1',
    '::1:0:0',
    '::ffff:8.8.8.8',
    '::fffe:ffff:ffff:ffff',
    '::ffff:1:0:0',
  ])('accepts %s, just outside a refused range', async (address) => {
    const resolve = async () => [{ address, family: address.includes(':') ? 6 : 4 }]
    expect(
      await refusedWebhook(new URL('https://hooks.example.com/a2a'), addressPolicy([], false), resolve),
    ).toBeUndefined()
  })

  it('lets through exactly the allowed addresses, and http: only when allowed', async () => {
    const receiver = await startReceiver()
    const allowed = await inProcess.start(pushAgent, { push: { allow: ['127.0.0.1/32'], allowHttp: true } })
    const taskId = (await allowed.rpc('SendMessage', v1Message('x'), { headers: V1 })).body.result.task.id
    expect(
      (await allowed.rpc('CreateTaskPushNotificationConfig', { taskId, url: receiver.url }, { headers: V1 })).body
        .result.url,
    ).toBe(receiver.url)
    const other = await allowed.rpc(
      'CreateTaskPushNotificationConfig',
      { taskId, url: 'http://10.0.0.1/hook' },
      { headers: V1 },
    )
    expect(other.body.error.message).toMatch(/10\.0\.0\.1 is a loopback, private/)

    const httpsOnly = await inProcess.start(pushAgent, { push: { allow: ['127.0.0.1'] } })
    const taskId2 = (await httpsOnly.rpc('SendMessage', v1Message('x'), { headers: V1 })).body.result.task.id
    expect(
      (await httpsOnly.rpc('CreateTaskPushNotificationConfig', { taskId: taskId2, url: receiver.url }, { headers: V1 }))
        .body.error.message,
    ).toMatch(/http: webhooks are refused/)
  })

  it('reads its allowances from A2A_PUSH_ALLOW and A2A_PUSH_ALLOW_HTTP', async () => {
    const receiver = await startReceiver()
    process.env.A2A_PUSH_ALLOW = '127.0.0.0/8, ::1'
    process.env.A2A_PUSH_ALLOW_HTTP = 'true'
    try {
      const target = await inProcess.start(pushAgent)
      const taskId = (await target.rpc('SendMessage', v1Message('x'), { headers: V1 })).body.result.task.id
      expect(
        (await target.rpc('CreateTaskPushNotificationConfig', { taskId, url: receiver.url }, { headers: V1 })).body
          .result.url,
      ).toBe(receiver.url)
    } finally {
      delete process.env.A2A_PUSH_ALLOW
      delete process.env.A2A_PUSH_ALLOW_HTTP
    }
  })

  it.each([['nonsense'], ['10.0.0.0/33'], ['::1/129'], ['300.1.1.1']])(
    'stops start-up on a bad allowance %s, naming it',
    (entry) => {
      expect(() => createA2AApp(pushAgent, { push: { allow: [entry] } })).toThrow(
        new RegExp(
          `push\\.allow: "${entry.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}" is not an IP address or CIDR range`,
        ),
      )
    },
  )

  it('refuses header-breaking tokens and credentials without echoing them', async () => {
    const target = await inProcess.start(pushAgent, { push: { allow: ['127.0.0.1'], allowHttp: true } })
    const taskId = (await target.rpc('SendMessage', v1Message('x'), { headers: V1 })).body.result.task.id
    const smuggled = 'abc\r\nX-Injected: 1'
    for (const config of [
      { token: smuggled },
      { authentication: { scheme: 'Bearer', credentials: smuggled } },
      { authentication: { scheme: 'Bearer\r\nX: y', credentials: 'c' } },
    ]) {
      const reply = await target.rpc(
        'CreateTaskPushNotificationConfig',
        { taskId, url: 'http://127.0.0.1:9/hook', ...config },
        { headers: V1 },
      )
      expect(reply.body.error.code).toBe(-32602)
      expect(reply.body.error.message).not.toContain('X-Injected')
    }
  })
})

describe('the SSRF guard at connect time', () => {
  const servers: Server[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve))
  })

  it('refuses a name that resolves to a private address when the connection is made (DNS rebinding)', async () => {
    const policy = addressPolicy([], true)
    // At configuration time the name looked public…
    expect(
      await refusedWebhook(new URL('http://rebinding.test/hook'), policy, async () => [
        { address: '93.184.216.34', family: 4 },
      ]),
    ).toBeUndefined()
    // …but the connection resolves it again, and now it is loopback.
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup(policy)('localhost', { all: true }, (e) => resolve(e)),
    )
    expect(error?.code).toBe('EA2ABLOCKED')
    expect(error?.message).toMatch(/localhost resolves to .* loopback/)
  })

  it('delivers nothing to a webhook whose name resolves to loopback at send time, and says why', async () => {
    const receiver = await startReceiver()
    const port = new URL(receiver.url).port
    const logger = captureLogger()
    const configs = new MemoryPushConfigs()
    // Saved without the configuration-time check, as a webhook whose DNS answer changed afterwards would be.
    configs.save({ id: 'c', taskId: 't', url: `http://localhost:${port}/hook`, dialect: 'a2a-1.0' })
    const delivery = new PushDelivery(
      configs,
      () => ({ body: '{}', contentType: 'application/json' }),
      { policy: addressPolicy([], true), timeoutMs: 1000, retries: 2, retryDelayMs: 1, maxConcurrent: 4, cacheMs: 0 },
      logger,
    )
    const event: TaskEvent = {
      kind: 'status-update',
      seq: 1,
      taskId: 't',
      contextId: 'c',
      status: { state: 'completed', timestamp: new Date().toISOString() },
      final: true,
    }
    delivery.event({ kind: 'task', id: 't', contextId: 'c', status: event.status, artifacts: [], history: [] }, event)
    await delivery.settle(2000)
    delivery.close()
    expect(receiver.attempts).toHaveLength(0)
    expect(logger.text('warn')).toMatch(/not delivered after 1 attempt: refused: localhost resolves to .* loopback/)
  })

  it('cuts a webhook that trickles its answer at the timeout, and closes its connection', async () => {
    const sockets = new Set<import('node:net').Socket>()
    const trickling = createServer((_req, res) => {
      res.writeHead(200)
      const timer = setInterval(() => res.write('.'), 50)
      res.on('close', () => clearInterval(timer))
    })
    trickling.on('connection', (socket) => {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
    })
    servers.push(trickling)
    await new Promise<void>((resolve) => trickling.listen(0, '127.0.0.1', resolve))
    const target = await nodeServer.start(pushAgent, {
      push: { allow: ['127.0.0.1'], allowHttp: true, timeoutMs: 300, retries: 0 },
    })
    const url = `http://127.0.0.1:${(trickling.address() as AddressInfo).port}/hook`
    await target.rpc(
      'SendMessage',
      { ...v1Message('x'), configuration: { taskPushNotificationConfig: { url } } },
      { headers: V1 },
    )
    await expect.poll(() => target.logger.text('warn'), { timeout: 3000 }).toMatch(/no complete answer within 300 ms/)
    await expect.poll(() => sockets.size, { timeout: 3000 }).toBe(0)
  })

  it('after three failed updates in a row, tries only the final one, even when the updates come apart', async () => {
    const receiver = await startReceiver(() => 500)
    const spaced = agent(async (_ctx, task) => {
      for (let i = 0; i < 5; i++) {
        task.working(`step ${i}`)
        await new Promise((resolve) => setTimeout(resolve, 30))
      }
      task.complete()
    }, withPush)
    const target = await nodeServer.start(spaced, { push: { allow: ['127.0.0.1'], allowHttp: true, retries: 0 } })
    await target.rpc(
      'SendMessage',
      { ...v1Message('x'), configuration: { taskPushNotificationConfig: { url: receiver.url } } },
      { headers: V1 },
    )
    await expect.poll(() => receiver.attempts.at(-1)?.body.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED')
    // working, step 0, step 1 fail; steps 2-4 are skipped; the final one is tried.
    expect(
      receiver.attempts.map(
        (attempt) => attempt.body.statusUpdate.status.message?.parts[0].text ?? attempt.body.statusUpdate.status.state,
      ),
    ).toEqual(['TASK_STATE_WORKING', 'step 0', 'step 1', 'TASK_STATE_COMPLETED'])
    expect(target.logger.text('warn')).toMatch(/only the final notification will be tried from now on/)
  })

  it('does not follow a redirect to another address', async () => {
    const inside = await startReceiver()
    const redirecting = createServer((_req, res) => res.writeHead(307, { location: inside.url }).end())
    servers.push(redirecting)
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve))
    const target = await nodeServer.start(pushAgent, { push: { allow: ['127.0.0.1'], allowHttp: true } })
    const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hook`
    await target.rpc(
      'SendMessage',
      { ...v1Message('x'), configuration: { taskPushNotificationConfig: { url } } },
      { headers: V1 },
    )
    await expect.poll(() => target.logger.text('warn')).toMatch(/HTTP 307 \(redirects are not followed\)/)
    expect(inside.attempts).toHaveLength(0)
  })
})
