/** Where `serveGrpc` listens. */
export interface GrpcServeOptions {
  /**
   * The port to listen on; `0` picks a free port.
   * @default 50051
   */
  port?: number
  /**
   * The address to listen on. Use `0.0.0.0` (or `::`) to listen on every interface (in a container).
   * @default '127.0.0.1'
   */
  host?: string
  /**
   * `host:port` the A2A cards list for the interface, where clients reach it through a proxy or a port mapping
   * (`grpc.example.com:443`).
   * @default the host of the app's publicUrl, else the listening host (`localhost` for every interface), and the
   * port it listens on
   */
  publicAddress?: string
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
