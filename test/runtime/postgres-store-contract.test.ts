import { createPostgresStore } from 'a2a-runtime/postgres-store'
import { type TaskStore, taskStoreContract } from 'a2a-runtime/store'
import { describe, inject, it } from 'vitest'

// The checks that load a store (hundreds of writes) get room on a loaded machine; none waits on the clock.
const CHECK_TIMEOUT_MS = 60_000

describe('the PostgreSQL store keeps the TaskStore contract', () => {
  const url = inject('postgresUrl')
  const schemaOf = new WeakMap<TaskStore, string>()
  const openOn = (schema: string) => {
    const store = createPostgresStore({ url, schema })
    schemaOf.set(store, schema)
    return store
  }
  // Each check on a schema of its own, in the run's one cluster.
  const open = () => openOn(`contract_${Math.random().toString(36).slice(2, 10)}`)
  // An instance restarting: it stops, and a new one reads the same schema.
  const reopen = async (store: TaskStore) => {
    await store.close?.()
    return openOn(schemaOf.get(store)!)
  }
  for (const check of taskStoreContract({ open, reopen })) it(check.name, check.run, CHECK_TIMEOUT_MS)
})
