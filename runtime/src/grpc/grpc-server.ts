/** Where `serveGrpc` listens. */
export interface GrpcServeOptions {
  /**
   * The port to listen on; `0` picks a free port.
   * @default 50051
   */
  port?: number
  /**
   * The address to listen on. Use `0.0.0.0` to listen on every interface (in a container).
   * @default '127.0.0.1'
   */
  host?: string
}

/** The gRPC binding listening, as `serveGrpc` resolves it. */
export interface GrpcServer {
  /** `host:port`, as the A2A cards list it (`protocolBinding: 'GRPC'`). */
  readonly address: string
  /** The port it listens on: the one picked when the option was `0`. */
  readonly port: number
  /** Stops accepting calls and takes the interface off the cards; calls still running get `shutdownTimeoutMs`. */
  close(): Promise<void>
}
