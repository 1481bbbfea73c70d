import type * as OtelApi from '@opentelemetry/api'
import type { Tracer, TracerProvider } from '@opentelemetry/api'
import { runtimeVersion } from './_runtime-version.js'

/** The instrumentation scope the runtime's spans and instruments are made under. */
export const SCOPE_NAME = 'a2a-runtime'
export const SCOPE_VERSION = runtimeVersion()

/**
 * The runtime's tracer on the TracerProvider registered now, asked again only when another one is; undefined while
 * none is (the API's own proxy has no SDK behind it): then a call records nothing and costs next to nothing. The
 * server's operations and the client's calls each keep one.
 */
export class RegisteredTracer {
  readonly #api: Pick<typeof OtelApi, 'trace' | 'ProxyTracerProvider'>
  #provider: TracerProvider | undefined
  #tracer: Tracer | undefined

  constructor(api: Pick<typeof OtelApi, 'trace' | 'ProxyTracerProvider'>) {
    this.#api = api
  }

  now(): Tracer | undefined {
    const global = this.#api.trace.getTracerProvider()
    // The API's proxy, unless another copy of the API registered its own: the SDK behind it, if any, is its delegate.
    const proxy = global instanceof this.#api.ProxyTracerProvider ? global : undefined
    const provider = proxy ? proxy.getDelegate() : global
    if (provider !== this.#provider) {
      this.#provider = provider
      this.#tracer = proxy
        ? proxy.getDelegateTracer(SCOPE_NAME, SCOPE_VERSION)
        : global.getTracer(SCOPE_NAME, SCOPE_VERSION)
    }
    return this.#tracer
  }
}
