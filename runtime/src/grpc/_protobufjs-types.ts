import { createRequire } from 'node:module'
import { type DescEnum, type DescField, type DescMessage, ScalarType } from '@bufbuild/protobuf'
import type protobuf from 'protobufjs/light.js'

type Protobufjs = typeof protobuf

/**
 * protobufjs as the project has it: its own install, else the copy @grpc/grpc-js brings (through
 * @grpc/proto-loader), so every project serving gRPC has one without installing another package. None (a future
 * grpc-js without it): undefined, and answers are encoded by reflection as before.
 */
export function loadProtobufjs(): Protobufjs | undefined {
  const here = createRequire(import.meta.url)
  const attempts = [
    () => here('protobufjs/light.js'),
    () => {
      const grpc = createRequire(here.resolve('@grpc/grpc-js'))
      return createRequire(grpc.resolve('@grpc/proto-loader'))('protobufjs/light.js')
    },
  ]
  for (const attempt of attempts) {
    try {
      return attempt() as Protobufjs
    } catch {}
  }
  return undefined
}

/**
 * The lf.a2a.v1 messages as protobufjs types, built from the same descriptors @bufbuild/protobuf reads
 * (`_descriptors.ts`, generated from proto/a2a.proto): one definition of the wire, and protobufjs's encoders, which
 * it compiles per type, write a message several times faster than @bufbuild/protobuf's reflection. Field names are
 * the descriptors' local names (camelCase), as the binding's ProtoJSON objects name them.
 */

const scalarName = (scalar: ScalarType): string => ScalarType[scalar].toLowerCase()

function fieldJson(field: DescField): protobuf.IField & { keyType?: string } {
  switch (field.fieldKind) {
    case 'scalar':
      return { id: field.number, type: scalarName(field.scalar) }
    case 'enum':
      return { id: field.number, type: `.${field.enum.typeName}` }
    case 'message':
      return { id: field.number, type: `.${field.message.typeName}` }
    case 'list': {
      const type =
        field.listKind === 'scalar'
          ? scalarName(field.scalar)
          : `.${(field.listKind === 'enum' ? field.enum : field.message).typeName}`
      // proto3 packs repeated numbers, which protobufjs writes only when told.
      return { id: field.number, type, rule: 'repeated', ...(field.packed && { options: { packed: true } }) }
    }
    case 'map': {
      const type =
        field.mapKind === 'scalar'
          ? scalarName(field.scalar)
          : `.${(field.mapKind === 'enum' ? field.enum : field.message).typeName}`
      return { id: field.number, type, keyType: scalarName(field.mapKey) }
    }
  }
}

/** The types of `messages` and of every message and enum their fields reach, in one protobufjs root. */
export function protobufjsRoot(protobuf: Protobufjs, messages: DescMessage[]): protobuf.Root {
  const root = new protobuf.Root()
  const seen = new Set<string>()
  const addEnum = (desc: DescEnum) => {
    if (seen.has(desc.typeName)) return
    seen.add(desc.typeName)
    const values = Object.fromEntries(desc.values.map((value) => [value.name, value.number]))
    root.define(desc.typeName.slice(0, -desc.name.length - 1)).add(protobuf.Enum.fromJSON(desc.name, { values }))
  }
  const addMessage = (desc: DescMessage) => {
    if (seen.has(desc.typeName)) return
    seen.add(desc.typeName)
    const fields = Object.fromEntries(desc.fields.map((field) => [field.localName, fieldJson(field)]))
    const oneofs = Object.fromEntries(
      desc.oneofs.map((oneof) => [oneof.localName, { oneof: oneof.fields.map((field) => field.localName) }]),
    )
    root
      .define(desc.typeName.slice(0, -desc.name.length - 1))
      .add(protobuf.Type.fromJSON(desc.name, { fields, oneofs }))
    for (const field of desc.fields) {
      if (field.enum) addEnum(field.enum)
      if (field.message) addMessage(field.message)
    }
  }
  for (const message of messages) addMessage(message)
  root.resolveAll()
  return root
}
