import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client'
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc'
import { decodeErrorInfo, decodeStatus } from '@a2a-js/sdk/errors/grpc'
import type { JsonValue } from '@bufbuild/protobuf'
import {
  type Client,
  credentials,
  InterceptingCall,
  type Interceptor,
  Metadata,
  makeGenericClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js'
import { type Agent, type ServeOptions, serveAgent } from 'a2a-runtime'
import { afterEach } from 'vitest'
import { clientDefinition } from '../../runtime/src/grpc/_client-definition.ts'
import { sdkTestAgent } from '../_sdk-v1.ts'
import { type CapturedLogger, captureLogger } from './_logger.ts'

/** Servers the gRPC suites start, each closed after its test. */
const started: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(started.splice(0).map((close) => close()))
})

export interface GrpcTarget {
  /** The HTTP address (the cards). */
  url: string
  /** `host:port` of the gRPC binding. */
  grpcAddress: string
  logger: CapturedLogger
  close(): Promise<void>
}

/** `serveAgent` on 127.0.0.1 with free ports for HTTP and gRPC, closed after the test. */
export async function serveWithGrpc(agent: Agent, options: ServeOptions = {}): Promise<GrpcTarget> {
  const logger = captureLogger()
  const server = await serveAgent(agent, {
    logger,
    grpcPort: 0,
    ...options,
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
  })
  started.push(() => server.close())
  if (!server.grpcAddress) throw new Error('serveAgent started no gRPC server')
  return { url: server.url, grpcAddress: server.grpcAddress, logger, close: () => server.close() }
}

/** The official SDK 1.x client, finding the gRPC interface through the agent's card. */
export const grpcClient = (url: string) =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new GrpcTransportFactory()],
      preferredTransports: ['GRPC'],
    }),
  ).createFromUrl(url)

/** Progress, an answer in chunks, a question on "ask", long work on "wait". */
export const grpcAgent = (card: Partial<Agent['card']> = {}): Agent =>
  sdkTestAgent({ name: 'gRPC Agent', description: 'Answers over gRPC', ...card }, { waitMs: 20_000 })

// --- A raw grpc-js client, for what the SDK client does not send (bad metadata, unread streams) ---------------

const RawClient = makeGenericClientConstructor(clientDefinition, 'A2AService')

/** Sends `a2a-version: 1.0` on every call that sets none, as the official SDK's client does. */
const versionOne: Interceptor = (options, nextCall) =>
  new InterceptingCall(nextCall(options), {
    start(metadata, listener, next) {
      if (metadata.get('a2a-version').length === 0) metadata.set('a2a-version', '1.0')
      next(metadata, listener)
    },
  })

/**
 * A grpc-js client of A2AService taking and giving ProtoJSON (the runtime's own client definition), closed after the
 * test; it sends `a2a-version: 1.0` unless told `{ version: false }`.
 */
export function rawClient(address: string, { version = true } = {}): Client & Record<string, any> {
  const client = new RawClient(address, credentials.createInsecure(), { interceptors: version ? [versionOne] : [] })
  started.push(async () => client.close())
  return client as Client & Record<string, any>
}

/** A unary call's answer, or its error as grpc-js gives it. */
export function unaryCall(
  client: Record<string, any>,
  method: string,
  request: JsonValue,
  metadata: Record<string, string> = {},
): Promise<{ response?: any; error?: ServiceError }> {
  const md = new Metadata()
  for (const [key, value] of Object.entries(metadata)) md.set(key, value)
  return new Promise((resolve) => {
    client[method](request, md, (error: ServiceError | null, response: any) =>
      resolve(error ? { error } : { response }),
    )
  })
}

/** The ErrorInfo reason and domain of an error's `grpc-status-details-bin`, read by the official SDK's decoder. */
export function errorInfoOf(error: ServiceError): { reason: string; domain: string } | undefined {
  const bin = error.metadata?.get('grpc-status-details-bin')[0]
  if (!bin) return undefined
  const status = decodeStatus(bin as Buffer)
  const info = status.details.find((detail) => detail.typeUrl === 'type.googleapis.com/google.rpc.ErrorInfo')
  return info && decodeErrorInfo(info.value)
}

/** A v1.0 message in ProtoJSON. */
export const protoMessage = (text: string) => ({
  messageId: crypto.randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text }],
})
