import { fromBinary, fromJson, type JsonValue, toBinary, toJson } from '@bufbuild/protobuf'
import type { ServiceDefinition } from '@grpc/grpc-js'
import { A2A_SERVICE } from './_codec.js'

/**
 * A2AService as a grpc-js client calls it: each request given as ProtoJSON and encoded, each answer decoded to
 * ProtoJSON. `a2a card validate --live` probes a gRPC interface with it.
 */
export const clientDefinition: ServiceDefinition = Object.fromEntries(
  A2A_SERVICE.methods.map((method) => [
    method.name,
    {
      path: `/${A2A_SERVICE.typeName}/${method.name}`,
      requestStream: false,
      responseStream: method.methodKind === 'server_streaming',
      requestSerialize: (json: JsonValue) => Buffer.from(toBinary(method.input, fromJson(method.input, json))),
      requestDeserialize: (bytes: Buffer) => bytes,
      responseSerialize: (value: Buffer) => value,
      responseDeserialize: (bytes: Buffer) => toJson(method.output, fromBinary(method.output, bytes)),
    },
  ]),
)
