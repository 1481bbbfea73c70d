import { constants as http2, type ServerHttp2Stream } from 'node:http2'
import { type Metadata, ServerInterceptingCall, type ServerInterceptor } from '@grpc/grpc-js'
import { A2AError } from '../errors.js'
import { checkV1Only } from '../http/_dialect-router.js'
import type { Principal } from '../types.js'
import type { GrpcHost } from './_grpc-host.js'
import { RequestReceipt } from './_request-receipt.js'
import { type GrpcStatus, INTERNAL, statusOf } from './_status.js'

/**
 * Every call passes here before its request message is read (a grpc-js server interceptor, on the call's metadata):
 * the caller must pass the agent's credential check (a server of several agents checks the one the message names,
 * once it is read), and `a2a-version` must ask for 1.0, as over HTTP+JSON. A call
 * refused ends there, nothing of its message read and no method run; one let in has its message counted while it
 * arrives (`RequestReceipt`), and its handler finds what was learnt here by its metadata (`admitted`).
 */

/** The metadata the binding reads, as the request headers an HTTP binding would pass (binary entries left out). */
const READ_METADATA = ['authorization', 'x-api-key', 'a2a-version', 'a2a-extensions', 'last-event-id'] as const

/** A call let in: its metadata as headers, its caller, and the HTTP/2 stream it came on (to reset it). */
export interface AdmittedCall {
  headers: Headers
  principal: Principal | undefined
  stream: ServerHttp2Stream | undefined
}

// The handler's call carries the very Metadata object the gate passed on.
const admittedCalls = new WeakMap<Metadata, AdmittedCall>()

/** What the gate learnt of a call it let in, by its metadata. */
export const admitted = (metadata: Metadata): AdmittedCall | undefined => admittedCalls.get(metadata)

function headersOf(metadata: Metadata): Headers {
  const headers = new Headers()
  for (const key of READ_METADATA) {
    // Several entries of one key are one comma-separated value, as HTTP joins repeated headers.
    const values = metadata.get(key).filter((value): value is string => typeof value === 'string')
    if (values.length > 0) headers.set(key, values.join(', '))
  }
  return headers
}

export function callGate(host: GrpcHost, requestTimeoutMs: number): ServerInterceptor {
  const { single, settings, logger } = host

  /** The caller, or the status its call ends with. */
  async function admit(headers: Headers): Promise<Principal | undefined> {
    // The caller first, as HTTP+JSON checks it: a stranger learns nothing of what the agent speaks.
    const authCheck = single?.served.current.authCheck
    let principal: Principal | undefined
    if (authCheck) {
      const checked = authCheck(headers)
      const outcome = checked instanceof Promise ? await checked : checked
      if (outcome instanceof A2AError) throw outcome
      principal = outcome
    }
    checkV1Only(headers.get('a2a-version'), 'gRPC')
    return principal
  }

  const refusal = (error: unknown): GrpcStatus => {
    if (error instanceof A2AError) return statusOf(error)
    logger.error('Unexpected error while checking a gRPC call', error)
    return INTERNAL
  }

  return (_method, call) => {
    // grpc-js's own call object keeps the HTTP/2 stream (test/runtime/grpc-attacks pins it).
    const stream = (call as { stream?: ServerHttp2Stream }).stream
    let receipt: RequestReceipt | undefined
    let cancelled = false
    /**
     * Ends a call whose request is not read (whole): its status, then RST_STREAM NO_ERROR once that is sent (Node
     * waits for it), which tells the client to stop sending, as gRPC over HTTP/2 lets a server do. Without it a
     * client that never finishes its message would keep the stream, and its place on the connection, open.
     */
    const endUnread = (ended: GrpcStatus): void => {
      call.sendStatus(ended)
      if (stream && !stream.closed) stream.close(http2.NGHTTP2_NO_ERROR)
    }
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, pass) {
            const headers = headersOf(metadata)
            admit(headers).then(
              (principal) => {
                // The client went away while it was checked: nothing is read or run for it.
                if (cancelled) return
                admittedCalls.set(metadata, { headers, principal, stream })
                const limits = { maxBodySize: settings.maxBodySize, requestTimeoutMs }
                receipt = new RequestReceipt(stream, settings.bodyBudget, limits, (ended) => endUnread(ended))
                pass(metadata)
              },
              (error: unknown) => endUnread(refusal(error)),
            )
          },
          onReceiveHalfClose(pass) {
            receipt?.done()
            pass()
          },
          onCancel() {
            cancelled = true
            receipt?.done()
          },
        })
      },
      sendStatus(ended, pass) {
        receipt?.done()
        pass(ended)
      },
    })
  }
}
