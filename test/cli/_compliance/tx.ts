import { described, envelopeOf, type Run } from './cli.ts'
import type { Check } from './context.ts'
import { completedAnswer, task } from './raw-agent.ts'
import { sentTask, stateOf } from './read.ts'

const COMPLETED = 'TASK_STATE_COMPLETED'

/** The addresses a run's --debug log shows it posted to. */
const postedTo = (run: Run): string[] =>
  [...run.stderr.matchAll(/^debug: → POST (\S+)/gm)].map((match) => new URL(match[1]!).pathname)

/** The A2A methods a run's --debug log shows it called (JSON-RPC bodies, and HTTP+JSON paths). */
const methodsCalled = (run: Run): string[] => [
  ...[...run.stderr.matchAll(/^debug: → \{.*?"method":"(\w+)"/gm)].map((match) => match[1]!),
  ...[
    ...run.stderr.matchAll(
      /^debug: → (?:GET|POST|DELETE) \S+?(\/message:\w+|:subscribe|\/pushNotificationConfigs|\/extendedAgentCard)/gm,
    ),
  ].map((match) => match[1]!),
]

/** Transports, chosen from the card and by --transport; tenants; the version on every request; capabilities. */
export const txChecks: Check[] = [
  {
    id: 'A2ACLI_TX_001',
    how: "sends to the SDK's agent with JSON-RPC listed first, and with HTTP+JSON first: the first one used",
    async run({ agents, run }, observe) {
      const [rpcFirst, restFirst] = await Promise.all([
        run(['send', '-a', agents.sdk.url, '--debug', 'hello']),
        run(['send', '-a', agents.sdkRestFirst.url, '--debug', 'hello']),
      ])
      observe.expect(
        rpcFirst.code === 0 &&
          postedTo(rpcFirst).every((path) => path === '/a2a/jsonrpc') &&
          postedTo(rpcFirst).length > 0,
        'JSON-RPC when the card lists it first',
        postedTo(rpcFirst).join(', ') || described(rpcFirst),
      )
      observe.expect(
        restFirst.code === 0 &&
          postedTo(restFirst).length > 0 &&
          postedTo(restFirst).every((path) => path.startsWith('/a2a/rest/')),
        'HTTP+JSON when the card lists it first',
        postedTo(restFirst).join(', ') || described(restFirst),
      )
    },
  },
  {
    id: 'A2ACLI_TX_002',
    how: '--transport repeated: the first preferred binding the card offers wins, one it lacks is skipped',
    async run({ agents, run }, observe) {
      const [preferred, skipped, single] = await Promise.all([
        run([
          'send',
          '-a',
          agents.sdkRestFirst.url,
          '--debug',
          '--transport',
          'JSONRPC',
          '--transport',
          'HTTP+JSON',
          'hello',
        ]),
        run([
          'send',
          '-a',
          agents.sdkRestFirst.url,
          '--debug',
          '--transport',
          'GRPC',
          '--transport',
          'JSONRPC',
          'hello',
        ]),
        run(['send', '-a', agents.sdk.url, '--debug', '--transport', 'HTTP+JSON', 'hello']),
      ])
      for (const [what, each, path] of [
        ['JSONRPC before HTTP+JSON: JSON-RPC', preferred, '/a2a/jsonrpc'],
        ['GRPC (not offered), then JSONRPC: JSON-RPC', skipped, '/a2a/jsonrpc'],
        ['HTTP+JSON over the card order: HTTP+JSON', single, '/a2a/rest'],
      ] as const)
        observe.expect(
          each.code === 0 && postedTo(each).length > 0 && postedTo(each).every((posted) => posted.startsWith(path)),
          what,
          postedTo(each).join(', ') || described(each),
        )
    },
  },
  {
    id: 'A2ACLI_TX_003',
    how: 'scripted agents declaring tenant "acme" over JSON-RPC and over HTTP+JSON, and one declaring none',
    async run({ run, raw }, observe) {
      const [rpc, rest, none] = await Promise.all([
        raw(completedAnswer, { interfaces: [{ binding: 'JSONRPC', tenant: 'acme' }], capabilities: {} }),
        raw(completedAnswer, { interfaces: [{ binding: 'HTTP+JSON', tenant: 'acme' }], capabilities: {} }),
        raw(completedAnswer, { interfaces: [{ binding: 'JSONRPC' }], capabilities: {} }),
      ])
      await Promise.all(
        [rpc, rest, none].flatMap((agent) => [
          run(['send', '-a', agent.url, 'hello']),
          run(['task', 'get', '-a', agent.url, 't1']),
          run(['task', 'cancel', '-a', agent.url, 't1']),
        ]),
      )
      const tenants = (agent: typeof rpc) => agent.calls().map((call) => call.params?.tenant)
      observe.expect(
        rpc.calls().length === 3 && tenants(rpc).every((tenant) => tenant === 'acme'),
        'JSON-RPC: "tenant": "acme" in the params of every request',
        JSON.stringify(tenants(rpc)),
      )
      observe.expect(
        rest.calls().length === 3 && rest.calls().every((call) => call.url.startsWith('/rest/acme/')),
        'HTTP+JSON: every path under /acme',
        rest
          .calls()
          .map((call) => call.url)
          .join(', '),
      )
      observe.expect(
        none.calls().length === 3 && tenants(none).every((tenant) => tenant === undefined),
        'no tenant field when the interface declares none',
        JSON.stringify(tenants(none)),
      )
    },
  },
  {
    id: 'A2ACLI_TX_004',
    how: "send over JSON-RPC and over HTTP+JSON, chosen with --transport, to this runtime's agent and the SDK's",
    async run({ agents, run }, observe) {
      for (const [who, agent] of [
        ['runtime', agents.runtime],
        ['SDK', agents.sdk.url],
      ] as const) {
        const over = (binding: string) =>
          run(['send', '-a', agent, '-o', 'json', '--debug', '--transport', binding, 'hello'])
        const [rpc, rest] = await Promise.all([over('JSONRPC'), over('HTTP+JSON')])
        observe.expect(
          stateOf(sentTask(rpc)) === COMPLETED && methodsCalled(rpc).includes('SendStreamingMessage'),
          `the ${who} agent answering over JSON-RPC`,
          described(rpc),
        )
        observe.expect(
          stateOf(sentTask(rest)) === COMPLETED && methodsCalled(rest).includes('/message:stream'),
          `the ${who} agent answering over HTTP+JSON`,
          described(rest),
        )
      }
    },
  },
  {
    id: 'A2ACLI_VER_001',
    how: 'every request to a scripted agent carries A2A-Version: 1.0; 0.3 refused; VersionNotSupportedError surfaced',
    async run({ run, raw }, observe) {
      const agent = await raw(completedAnswer)
      await Promise.all([
        run(['send', '-a', agent.url, 'hello']),
        run(['send', '-a', agent.url, '--stream', 'hello']),
        run(['task', 'get', '-a', agent.url, 't1']),
        run(['send', '-a', agent.url, '--transport', 'HTTP+JSON', 'hello']),
      ])
      const versions = agent.requests.map((request) => request.headers['a2a-version'])
      observe.expect(
        agent.requests.length >= 8 && versions.every((version) => version === '1.0'),
        'A2A-Version: 1.0 on every request, the card requests included',
        `${agent.requests.length} requests, versions ${JSON.stringify([...new Set(versions)])}`,
      )
      const before = agent.requests.length
      const legacy = await run(['send', '-a', agent.url, '--a2a-version', '0.3', '-o', 'json', 'hello'])
      observe.expect(
        legacy.code === 2 && envelopeOf(legacy)?.code === 'A2ACLI_ERR_USAGE' && agent.requests.length === before,
        '--a2a-version 0.3 refused as a usage error before any request',
        described(legacy),
      )
      const refusing = await raw(() => ({
        error: { code: -32009, message: 'version 1.0 is not supported', reason: 'VERSION_NOT_SUPPORTED', status: 400 },
      }))
      const refused = await run(['send', '-a', refusing.url, '-o', 'json', '--transport', 'JSONRPC', 'hello'])
      observe.expect(
        envelopeOf(refused)?.code === 'VersionNotSupportedError' &&
          refusing.calls().every((call) => call.headers['a2a-version'] === '1.0') &&
          refusing.calls().length === 1,
        'VersionNotSupportedError surfaced, no retry with another version',
        `${described(refused)}; ${refusing.calls().length} call(s)`,
      )
    },
  },
  {
    id: 'A2ACLI_VER_003',
    how: 'streaming, push configs, the extended card and subscribe asked of an agent whose card declares none of them',
    async run({ agents, run }, observe) {
      const taskId = sentTask(await run(['send', '-a', agents.plain, '-o', 'json', 'hello']))?.id ?? 'none'
      const [streamed, push, extended, subscribed] = await Promise.all([
        run(['send', '-a', agents.plain, '--debug', '--stream', 'hello']),
        run([
          'task',
          'push-config',
          'create',
          taskId,
          '--webhook',
          'http://127.0.0.1:9/h',
          '-a',
          agents.plain,
          '--debug',
          '-o',
          'json',
        ]),
        run(['card', 'get', '--extended', '-a', agents.plain, '--debug', '-o', 'json']),
        run(['task', 'subscribe', taskId, '-a', agents.plain, '--debug']),
      ])
      observe.expect(
        streamed.code === 0 &&
          !methodsCalled(streamed).includes('SendStreamingMessage') &&
          methodsCalled(streamed).includes('SendMessage') &&
          /streaming/.test(streamed.stderr),
        '--stream: SendMessage instead of a stream, and a warning',
        `${methodsCalled(streamed).join(', ')}; ${described(streamed)}`,
      )
      observe.expect(
        envelopeOf(push)?.code === 'PushNotificationNotSupportedError' && methodsCalled(push).length === 0,
        'push-config: refused without asking the agent',
        `${methodsCalled(push).join(', ')}; ${described(push)}`,
      )
      observe.expect(
        /^[A-Z]\w+Error$/.test(envelopeOf(extended)?.code ?? '') && methodsCalled(extended).length === 0,
        '--extended: refused without asking the agent',
        `${methodsCalled(extended).join(', ')}; ${described(extended)}`,
      )
      observe.expect(
        subscribed.code === 0 &&
          !methodsCalled(subscribed).includes('SubscribeToTask') &&
          methodsCalled(subscribed).includes('GetTask'),
        'subscribe: the task read instead of a subscription',
        `${methodsCalled(subscribed).join(', ')}; ${described(subscribed)}`,
      )
    },
  },
  {
    id: 'A2ACLI_TX_005',
    how: "send to an agent whose card offers gRPC only, and with --transport GRPC to this runtime's agent",
    async run({ agents, run, raw }, observe) {
      const grpcOnly = await raw(() => ({ result: task('g1', COMPLETED) }), {
        card: { supportedInterfaces: [{ url: '127.0.0.1:9', protocolBinding: 'GRPC', protocolVersion: '1.0' }] },
      })
      const [only, preferred] = await Promise.all([
        run(['send', '-a', grpcOnly.url, '-o', 'json', 'hello']),
        run(['send', '-a', agents.runtime, '-o', 'json', '--debug', '--transport', 'GRPC', 'hello']),
      ])
      observe.expect(stateOf(sentTask(only)) === COMPLETED, 'a gRPC-only agent answered over gRPC', described(only))
      observe.expect(
        stateOf(sentTask(preferred)) === COMPLETED && postedTo(preferred).length === 0,
        '--transport GRPC to speak gRPC',
        `it posted over HTTP (${described(preferred)})`,
      )
      if (observe.failed && envelopeOf(only)?.code === 'A2ACLI_ERR_CARD_INVALID')
        return {
          status: 'fail',
          note:
            'the client speaks JSON-RPC and HTTP+JSON only: a card offering gRPC alone is refused ' +
            '(A2ACLI_ERR_CARD_INVALID), and --transport GRPC falls back to the next binding the card offers',
        }
    },
  },
]
