import { checkedPublicAddress } from '../grpc/_public-address.js'
import type { GrpcServer } from '../grpc/grpc-server.js'
import { startGrpc } from '../grpc/serve-grpc.js'
import type { A2AApp } from '../http/app-options.js'
import type { Logger } from '../logger.js'
import { readSlowClientTimeouts, type SlowClientTimeouts } from '../node/_slow-client-timeouts.js'
import { type Env, envValue, optionalWholeNumberSetting } from '../settings.js'

/**
 * gRPC under `a2a dev`, as `a2a start` serves it: with `A2A_GRPC_PORT` set, the binding listens beside the dev server
 * once the agent's app exists (the first load that succeeds: a project whose code does not load yet has no app to
 * serve), and keeps serving it across reloads, which swap the agent inside the same app.
 */
export class DevGrpc {
  #server: GrpcServer | undefined
  #starting: Promise<void> | undefined

  private constructor(
    readonly port: number,
    readonly publicAddress: string | undefined,
    readonly host: string,
    readonly logger: Logger,
    readonly timeouts: SlowClientTimeouts,
  ) {}

  /** Undefined when `A2A_GRPC_PORT` is not set; a bad value stops the start naming it, as for `a2a start`. */
  static fromEnv(env: Env, host: string, logger: Logger): DevGrpc | undefined {
    const publicAddress = checkedPublicAddress(
      envValue(env, 'A2A_GRPC_PUBLIC_ADDRESS'),
      'grpcPublicAddress (A2A_GRPC_PUBLIC_ADDRESS)',
    )
    const port = optionalWholeNumberSetting({
      option: 'grpcPort',
      variable: 'A2A_GRPC_PORT',
      given: undefined,
      env,
      min: 0,
      max: 65535,
    })
    // The dev server's request and idle timeouts, as HTTP's under it (listhen's server gets the same).
    const timeouts = readSlowClientTimeouts({}, env)
    return port === undefined ? undefined : new DevGrpc(port, publicAddress, host, logger, timeouts)
  }

  /** Serves the app over gRPC (once; later calls are the same start). A failure is logged: the HTTP side goes on. */
  serve(app: A2AApp): Promise<void> {
    this.#starting ??= startGrpc(app, {
      port: this.port,
      host: this.host,
      publicAddress: this.publicAddress,
      requestTimeoutMs: this.timeouts.request,
      idleTimeoutMs: this.timeouts.keepAlive,
    }).then(
      (server) => {
        this.#server = server
      },
      (error: unknown) => this.logger.error(`gRPC is not served: ${(error as Error).message}`),
    )
    return this.#starting
  }

  async close(): Promise<void> {
    await this.#starting
    await this.#server?.close()
  }
}
