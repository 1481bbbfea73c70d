import { type DescMessage, fromBinary, fromJson, type JsonValue, toBinary, toJson } from '@bufbuild/protobuf'
import { InvalidParamsError } from '../errors.js'
import { a2aFile } from './_descriptors.js'

/**
 * Protobuf messages of lf.a2a.v1 to and from ProtoJSON, the shape the v1.0 binding's methods read and answer:
 * @bufbuild/protobuf decodes the binary message and writes it as ProtoJSON (Struct as plain JSON, Timestamp as an
 * ISO string, bytes as base64, enums by name, a oneof as the field set), and reads the answer back the same way.
 */

/** One RPC of A2AService: its name, whether it streams, and its messages' codecs. */
export interface GrpcMethod {
  name: string
  serverStreaming: boolean
  /** The request as ProtoJSON; a message that is not one of its type is invalid params. */
  decode(bytes: Uint8Array): JsonValue
  /** An answer (a ProtoJSON object) as the binary message. */
  encode(json: unknown): Uint8Array
}

const JSON_OUT = { alwaysEmitImplicit: false } as const
// Fields a message type lacks are dropped rather than refused: what the binding answers is ProtoJSON of the same
// messages, and a field one version of the spec adds must not fail an answer.
const JSON_IN = { ignoreUnknownFields: true } as const

function decoder(schema: DescMessage): (bytes: Uint8Array) => JsonValue {
  return (bytes) => {
    try {
      return toJson(schema, fromBinary(schema, bytes), JSON_OUT)
    } catch (error) {
      throw new InvalidParamsError(
        `the request is not a valid ${schema.typeName} message (${error instanceof Error ? error.message.slice(0, 120) : 'unreadable'})`,
      )
    }
  }
}

function encoder(schema: DescMessage): (json: unknown) => Uint8Array {
  return (json) => toBinary(schema, fromJson(schema, json as JsonValue, JSON_IN))
}

/** Every RPC of lf.a2a.v1.A2AService, by name. */
export const A2A_SERVICE = a2aFile.services.find((service) => service.name === 'A2AService')!

export const grpcMethods: GrpcMethod[] = A2A_SERVICE.methods.map((method) => ({
  name: method.name,
  serverStreaming: method.methodKind === 'server_streaming',
  decode: decoder(method.input),
  encode: encoder(method.output),
}))
