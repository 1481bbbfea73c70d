import type { DescMessage } from '@bufbuild/protobuf'
import { statusFile } from './_descriptors.js'

/**
 * google.rpc's Status and ErrorInfo, the messages a gRPC error carries in `grpc-status-details-bin` (A2A v1.0
 * §10.6): the server writes them (`_status.ts`), `a2a card validate --live` reads them (`_probe-client.ts`).
 */
const schema = (name: string): DescMessage => statusFile.messages.find((message) => message.name === name)!

export const StatusSchema = schema('Status')
export const ErrorInfoSchema = schema('ErrorInfo')
