import { fromBinary, type JsonValue } from '@bufbuild/protobuf'
import { type Client, credentials, Metadata, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js'
import { clientDefinition } from './_client-definition.js'
import { ErrorInfoSchema, StatusSchema } from './_rpc-status.js'

/**
 * A small gRPC client of A2AService for `a2a card validate --live`: requests and answers as ProtoJSON, the
 * `google.rpc.ErrorInfo` reason of an error read from `grpc-status-details-bin`. Loaded only to probe a gRPC
 * interface, and only where `@grpc/grpc-js` and `@bufbuild/protobuf` are installed.
 */

const ProbeClient = makeGenericClientConstructor(clientDefinition, 'A2AService')

/** How a call ended: its answer (or every streamed answer), or its gRPC status code and ErrorInfo reason. */
export type ProbeOutcome = { answers: JsonValue[] } | { code: number; reason: string | undefined; message: string }

export interface GrpcProbeClient {
  call(method: string, request: JsonValue, headers: Record<string, string>): Promise<ProbeOutcome>
  close(): void
}

export function grpcProbeClient(address: string, timeoutMs: number): GrpcProbeClient {
  // biome-ignore lint/suspicious/noExplicitAny: grpc-js makes a method per RPC name at run time
  const client = new ProbeClient(address, credentials.createInsecure()) as Client & Record<string, any>
  return {
    call(method, request, headers) {
      const metadata = new Metadata()
      metadata.set('a2a-version', '1.0')
      for (const [name, value] of Object.entries(headers)) metadata.set(name, value)
      const options = { deadline: Date.now() + timeoutMs }
      return new Promise((resolve) => {
        const failed = (error: ServiceError) =>
          resolve({ code: error.code, reason: reasonOf(error), message: error.details || error.message })
        if (clientDefinition[method]?.responseStream) {
          const answers: JsonValue[] = []
          const call = client[method](request, metadata, options)
          call.on('data', (answer: JsonValue) => answers.push(answer))
          call.on('error', failed)
          call.on('end', () => resolve({ answers }))
        } else {
          client[method](request, metadata, options, (error: ServiceError | null, answer: JsonValue) =>
            error ? failed(error) : resolve({ answers: [answer] }),
          )
        }
      })
    },
    close: () => client.close(),
  }
}

function reasonOf(error: ServiceError): string | undefined {
  const bin = error.metadata?.get('grpc-status-details-bin')[0]
  if (!(bin instanceof Uint8Array)) return undefined
  try {
    const status = fromBinary(StatusSchema, bin) as unknown as {
      details: Array<{ typeUrl: string; value: Uint8Array }>
    }
    const info = status.details.find((detail) => detail.typeUrl.endsWith('/google.rpc.ErrorInfo'))
    return info && (fromBinary(ErrorInfoSchema, info.value) as unknown as { reason: string }).reason
  } catch {
    return undefined
  }
}
