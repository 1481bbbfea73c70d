// `a2a-runtime/redis-store`: the shared store for several instances of one agent. It needs the `ioredis` package,
// an optional peer: `npm install ioredis` in the agent's project (`A2A_STORE=redis://…` needs it too).

export type { RedisStoreOptions } from '../stores/redis/store.js'
export { createRedisStore } from '../stores/redis/store.js'
