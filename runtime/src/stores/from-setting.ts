import { readStoreSetting, type StoreSettingOptions } from './_store-setting.js'
import { createFileStore } from './file/store.js'
import { createMemoryStore } from './memory.js'
import { createPostgresStore } from './postgres/store.js'
import { createRedisStore } from './redis/store.js'
import type { TaskStore } from './task-store.js'

/**
 * The store one setting names (`A2A_STORE`): `memory` (the default), `file:<directory>` for the durable
 * embedded store (a relative directory is taken from `cwd`), or `redis://…` or `postgres://…` (`postgresql://…`)
 * for several instances. Made at once, by a module that loads every store's; an app made from the setting loads only
 * the one it names (`lazyStoreFromSetting`).
 */
export function storeFromSetting(setting: string, options: StoreSettingOptions = {}): TaskStore {
  const named = readStoreSetting(setting, options)
  switch (named.kind) {
    case 'memory':
      return createMemoryStore({ env: named.env })
    case 'file':
      return createFileStore(named.options)
    case 'redis':
      return createRedisStore(named.options)
    case 'postgres':
      return createPostgresStore(named.options)
  }
}
