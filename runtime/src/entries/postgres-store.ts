// `a2a-runtime/postgres-store`: the PostgreSQL store, durable and shared by several instances of one agent. It needs
// the `pg` package, an optional peer: `npm install pg` in the agent's project (`A2A_STORE=postgres://…` needs it too).

export type { PostgresStoreOptions, PostgresTaskStore } from '../stores/postgres/store.js'
export { createPostgresStore, migratePostgresStore } from '../stores/postgres/store.js'
