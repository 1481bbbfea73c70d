// `a2a-runtime/file-store`: the durable embedded store, for a `store` option of its own (`A2A_STORE=file:<dir>`
// needs no import). Node, Bun and Deno only (node:fs).

export type { FileStoreOptions } from '../stores/file/store.js'
export { createFileStore } from '../stores/file/store.js'
