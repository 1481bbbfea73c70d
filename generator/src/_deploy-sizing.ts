/**
 * What the platforms that size a container (Kubernetes, Cloud Run, Fly.io) give the agent. The runtime's byte
 * budgets follow the heap limit (a quarter each for the stores' tasks and the running tasks), so the heap is set
 * (`--max-old-space-size`) and the container's memory sits above it: the request bodies being received and the
 * answers not yet read are Buffers outside the heap, capped here, and Node itself (code, stacks, the young
 * generation) needs room of its own.
 */
export const DEPLOY_SIZING = {
  /** The old generation's limit, `--max-old-space-size` (MiB): the tasks then hold 64 MiB each way. */
  heapMiB: 256,
  /** A2A_MAX_BODY_BYTES_IN_FLIGHT and A2A_MAX_PENDING_RESPONSE_BYTES: 32 MiB each (64 MiB by default). */
  bufferBytes: 32 * 1024 * 1024,
  /** The container's memory: the heap, both buffer budgets and 192 MiB for Node itself. */
  memoryMiB: 512,
}
