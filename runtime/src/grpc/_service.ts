import type {
  Metadata,
  ServerUnaryCall,
  ServerWritableStream,
  ServiceDefinition,
  StatusObject,
  sendUnaryData,
  UntypedServiceImplementation,
} from '@grpc/grpc-js'
import { v1Binding, withErrorInfo } from '../bindings/_v1.js'
import type { CallContext, MethodHandler } from '../bindings/shared/_binding.js'
import { A2AError, ErrorCode } from '../errors.js'
import type { AppInternals } from '../http/_app-internals.js'
import { V1_VERSION } from '../http/_dialect-router.js'
import type { Principal } from '../types.js'
import { A2A_SERVICE, type GrpcMethod, grpcMethods } from './_codec.js'
import { INTERNAL, statusOf } from './_status.js'
import { GrpcEventStream } from './_stream.js'

/**
 * lf.a2a.v1.A2AService answered by the v1.0 binding's own methods, as JSON-RPC answers them: each request decoded to
 * the ProtoJSON params the method reads, the caller checked by the agent's credential check, the result encoded
 * back; a streaming method writes to a gRPC server stream counted against the app's open streams.
 */

/** The metadata the binding reads, as the request headers an HTTP binding would pass (binary entries left out). */
const READ_METADATA = ['authorization', 'x-api-key', 'a2a-version', 'a2a-extensions', 'last-event-id'] as const

function headersOf(metadata: Metadata): Headers {
  const headers = new Headers()
  for (const key of READ_METADATA) {
    // Several entries of one key are one comma-separated value, as HTTP joins repeated headers.
    const values = metadata.get(key).filter((value): value is string => typeof value === 'string')
    if (values.length > 0) headers.set(key, values.join(', '))
  }
  return headers
}

/** `a2a-version` absent (1.0 is assumed) or 1.0: gRPC serves A2A v1.0 only. */
function checkVersion(headers: Headers): void {
  const requested = headers.get('a2a-version')?.trim()
  if (!requested || V1_VERSION.test(requested)) return
  throw withErrorInfo(
    new A2AError(
      ErrorCode.VersionNotSupported,
      `a2a-version ${JSON.stringify(requested.slice(0, 20))} is not supported over gRPC; this agent speaks 1.0 here`,
    ),
  )
}

/** A v1.0 stream result as the text the binding's streams carry: the bare StreamResponse, read back to encode it. */
const grpcFrameV1 = (result: object): string => JSON.stringify(result)

type Call = ServerUnaryCall<Buffer, Buffer> | ServerWritableStream<Buffer, Buffer>

/** A Uint8Array as the Buffer grpc-js writes (no copy). */
const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

export function a2aService(
  internals: AppInternals,
  /** The agent's HTTP address, which the extended card's interfaces are given from. */
  cardUrl: () => string,
): { definition: ServiceDefinition; implementation: UntypedServiceImplementation } {
  const { served, engine, streams, logger } = internals
  const streamResponse = grpcMethods.find((method) => method.name === 'SendStreamingMessage')!
  const encodeFrame = (frame: string) => asBuffer(streamResponse.encode(JSON.parse(frame)))

  /** The method's result for one call: metadata and credentials checked, params decoded, the context made. */
  async function answer(
    method: MethodHandler,
    codec: GrpcMethod,
    call: Call,
    openStream: CallContext['openStream'],
  ): Promise<unknown> {
    const current = served.current
    const headers = headersOf(call.metadata)
    checkVersion(headers)
    let principal: Principal | undefined
    if (current.authCheck) {
      const checked = current.authCheck(headers)
      const outcome = checked instanceof Promise ? await checked : checked
      if (outcome instanceof A2AError) throw outcome
      principal = outcome
    }
    const params = codec.decode(call.request)
    return method(params, {
      id: null,
      engine,
      streaming: current.streaming,
      outputModes: current.template.defaultOutputModes,
      inputModes: current.inputModes,
      headers,
      eventIds: true,
      openStream,
      frameV1: grpcFrameV1,
      push: current.push,
      dialect: 'a2a-1.0',
      principal,
      extendedCard: current.template.extendedCard && ((dialect) => current.extendedCard(dialect, cardUrl())),
    })
  }

  /** The status a failure ends the call with; an unexpected one is logged and answered INTERNAL. */
  function statusFor(error: unknown, name: string): Partial<StatusObject> {
    if (error instanceof A2AError) return statusOf(error)
    logger.error(`Unexpected error while answering the gRPC call ${name}`, error)
    return INTERNAL
  }

  const noStream = (): never => {
    throw new Error('A unary method opened a stream')
  }

  const unary =
    (method: MethodHandler, codec: GrpcMethod) =>
    (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void => {
      answer(method, codec, call, noStream)
        .then((result) => asBuffer(codec.encode(result)))
        .then(
          (bytes) => callback(null, bytes),
          (error: unknown) => callback(statusFor(error, codec.name)),
        )
    }

  const serverStreaming =
    (method: MethodHandler, codec: GrpcMethod) =>
    (call: ServerWritableStream<Buffer, Buffer>): void => {
      let stream: GrpcEventStream | undefined
      const openStream = () => {
        stream = streams.openCounted((counted) => new GrpcEventStream(call, encodeFrame, counted))
        return stream
      }
      answer(method, codec, call, openStream).then(
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
