import { type DescMessage, fromBinary, fromJson, type JsonValue, toBinary, toJson } from '@bufbuild/protobuf'
import { InvalidParamsError } from '../errors.js'
import { compactEncoder } from './_compact-answers.js'
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
  /**
   * A stream result as the binary message, read as its JSON text would read (values JSON has not, such as undefined
   * or a Date, as `JSON.stringify` writes them): what a stream's client gets is what an SSE client of it gets.
   */
  encodeAsJson(json: object): Uint8Array
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

/** By reflection: every answer this path encodes, and every error an answer has, is @bufbuild/protobuf's. */
const reflected = (schema: DescMessage, json: unknown): Uint8Array =>
  toBinary(schema, fromJson(schema, json as JsonValue, JSON_IN))

/** The answers sent most go the compact way (`_compact-answers.ts`) when their values allow, the others by reflection. */
function encoders(schema: DescMessage): Pick<GrpcMethod, 'encode' | 'encodeAsJson'> {
  const compact = compactEncoder(schema)
  if (!compact)
    return {
      encode: (json) => reflected(schema, json),
      encodeAsJson: (json) => reflected(schema, JSON.parse(JSON.stringify(json))),
    }
  return {
    encode: (json) => compact(json) ?? reflected(schema, json),
    // The compact way takes only plain JSON, which its text reads back the same: only the rest goes through it.
    encodeAsJson: (json) => compact(json) ?? reflected(schema, JSON.parse(JSON.stringify(json))),
  }
}

/** Every RPC of lf.a2a.v1.A2AService, by name. */
export const A2A_SERVICE = a2aFile.services.find((service) => service.name === 'A2AService')!

export const grpcMethods: GrpcMethod[] = A2A_SERVICE.methods.map((method) => ({
  name: method.name,
  serverStreaming: method.methodKind === 'server_streaming',
  decode: decoder(method.input),
  ...encoders(method.output),
}))
