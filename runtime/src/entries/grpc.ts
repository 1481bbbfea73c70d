// `a2a-runtime/grpc`: the A2A v1.0 gRPC binding, Node only. It needs the packages `@grpc/grpc-js` and
// `@bufbuild/protobuf`, optional peers loaded when `serveGrpc` is called: `npm install @grpc/grpc-js
// @bufbuild/protobuf` in the agent's project (`A2A_GRPC_PORT` needs them too).

export type { GrpcServeOptions, GrpcServer } from '../grpc/grpc-server.js'
export { serveGrpc } from '../grpc/serve-grpc.js'
