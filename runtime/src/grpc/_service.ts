import {
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js'
import { v1Binding } from '../bindings/_v1.js'
import type { CallContext, MethodHandler } from '../bindings/shared/_binding.js'
import { A2AError } from '../errors.js'
import { type BindingParts, callContext } from '../http/_call-context.js'
import type { ServedAgent } from '../http/_served-agent.js'
import { tracedGrpc } from '../telemetry/_grpc.js'
import { traced } from '../telemetry/_traced-call.js'
import type { Principal } from '../types.js'
import { admitted } from './_call-gate.js'
import { A2A_SERVICE, type GrpcMethod, grpcMethods } from './_codec.js'
import { type GrpcAgent, type GrpcHost, UnknownTenantError } from './_grpc-host.js'
import { type GrpcStatus, INTERNAL, statusOf } from './_status.js'
import { GrpcEventStream } from './_stream.js'
import { answerCounted } from './_unary-answer.js'

/**
 * lf.a2a.v1.A2AService answered by the v1.0 binding's own methods, as JSON-RPC answers them: each call let in by the
 * call gate (`_call-gate.ts`: version, credentials), its request decoded to the ProtoJSON params the method reads,
 * the result encoded back; a streaming method writes to a gRPC server stream counted against the app's open streams.
 */

/** A v1.0 stream result as a gRPC stream takes it: the StreamResponse itself, which the stream encodes once. */
const grpcFrameV1 = (result: object): object => result

type Call = ServerUnaryCall<Buffer, Buffer> | ServerWritableStream<Buffer, Buffer>

/** A Uint8Array as the Buffer grpc-js writes (no copy). */
const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/**
 * Where the extended card says the agent is over HTTP, while the app knows no address of its own (an app served
 * by other means than `serveAgent` and never told its URL): the address it would have on this machine by default.
 */
const UNKNOWN_HTTP_URL = 'http://localhost:3000/'

export function a2aService(host: GrpcHost): {
  definition: ServiceDefinition
  implementation: UntypedServiceImplementation
} {
  const { streams, outgoing, logger, single } = host
  const streamResponse = grpcMethods.find((method) => method.name === 'SendStreamingMessage')!
  const encodeFrame = (frame: object) => asBuffer(streamResponse.encodeAsJson(frame))

  /** The method's result for one call the gate let in: its params decoded, its context made as HTTP's are. */
  function answer(method: MethodHandler, codec: GrpcMethod, call: Call, openStream: () => GrpcEventStream) {
    const gate = admitted(call.metadata)
    if (!gate) throw new Error('A gRPC call reached its method without passing the call gate')
    const params = codec.decode(call.request)
    const run = (agent: GrpcAgent, current: ServedAgent, principal: Principal | undefined) => {
      const { engine } = agent
      const parts: BindingParts = { engine, eventIds: true, openStream, frameV1: grpcFrameV1 }
      const cardUrl = () => agent.url() ?? UNKNOWN_HTTP_URL
      const context: CallContext = callContext(
        parts,
        current,
        null,
        gate.headers,
        'a2a-1.0',
        principal,
        current.template.extendedCard ? cardUrl : undefined,
      )
      const telemetry = engine.instrumentation
      return telemetry
        ? traced(telemetry, tracedGrpc(codec.name, current.template, call.metadata), method, params, context)
        : method(params, context)
    }
    if (single) return run(single, single.served.current, gate.principal)
    // Several agents: the message names the agent, whose credentials are checked now, before its method runs.
    const agent = host.agentFor(tenantOf(params))
    const current = agent.served.current
    return callerOf(current, gate.headers).then((principal) => run(agent, current, principal))
  }

  /** The status a failure ends the call with; an unexpected one is logged and answered INTERNAL. */
  function statusFor(error: unknown, name: string): GrpcStatus {
    if (error instanceof A2AError) return statusOf(error)
    if (error instanceof UnknownTenantError) return { code: status.NOT_FOUND, details: error.message }
    logger.error(`Unexpected error while answering the gRPC call ${name}`, error)
    return INTERNAL
  }

  const noStream = (): never => {
    throw new Error('A unary method opened a stream')
  }

  /** The answer as its protobuf message; one the agent's values give no form (bytes not base64) ends the call. */
  function encoded(codec: GrpcMethod, result: unknown): Buffer | undefined {
    try {
      return asBuffer(codec.encode(result))
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error)
      logger.error(`The gRPC call ${codec.name} ended INTERNAL: its answer cannot be encoded (${why})`)
      return undefined
    }
  }

  const unary =
    (method: MethodHandler, codec: GrpcMethod) =>
    (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void => {
      new Promise((resolve) => resolve(answer(method, codec, call, noStream))).then(
        (result) => {
          const bytes = encoded(codec, result)
          if (bytes) answerCounted(bytes, callback, admitted(call.metadata)?.stream, outgoing)
          else callback(INTERNAL)
        },
        (error: unknown) => callback(statusFor(error, codec.name)),
      )
    }

  const serverStreaming =
    (method: MethodHandler, codec: GrpcMethod) =>
    (call: ServerWritableStream<Buffer, Buffer>): void => {
      let stream: GrpcEventStream | undefined
      const openStream = () => {
        const http2Stream = admitted(call.metadata)?.stream
        stream = streams.openCounted((counted) => new GrpcEventStream(call, encodeFrame, counted, http2Stream))
        return stream
      }
      new Promise((resolve) => resolve(answer(method, codec, call, openStream))).then(
        () => stream?.started(),
        (error: unknown) => {
          const status = statusFor(error, codec.name)
          if (stream) stream.failed(status)
          else call.emit('error', status)
        },
      )
    }

  const definition: Record<string, ServiceDefinition[string]> = {}
  const implementation: UntypedServiceImplementation = {}
  for (const codec of grpcMethods) {
    const method = v1Binding.methods.get(codec.name)
    if (!method) continue
    definition[codec.name] = {
      path: `/${A2A_SERVICE.typeName}/${codec.name}`,
      requestStream: false,
      responseStream: codec.serverStreaming,
      // Messages are decoded and encoded by the handlers, so a malformed one is invalid params, not a transport error.
      requestSerialize: (value: Buffer) => value,
      requestDeserialize: (bytes: Buffer) => bytes,
      responseSerialize: (value: Buffer) => value,
      responseDeserialize: (bytes: Buffer) => bytes,
    }
    implementation[codec.name] = codec.serverStreaming ? serverStreaming(method, codec) : unary(method, codec)
  }
  return { definition, implementation }
}

/** The tenant a request message names (ProtoJSON leaves an empty one out): `''` when none. */
function tenantOf(params: unknown): string {
  const tenant = typeof params === 'object' && params !== null ? (params as { tenant?: unknown }).tenant : undefined
  return typeof tenant === 'string' ? tenant : ''
}

/** The caller as the agent's credential check reads the call's metadata; a refusal is thrown, as the gate's is. */
async function callerOf(current: ServedAgent, headers: Headers): Promise<Principal | undefined> {
  const { authCheck } = current
  if (!authCheck) return undefined
  const checked = authCheck(headers)
  const outcome = checked instanceof Promise ? await checked : checked
  if (outcome instanceof A2AError) throw outcome
  return outcome
}
