import { ConfigurationError, ServerUnavailableError } from '../errors.js'
import type { PushConfigStore } from '../push/push-config.js'
import { reportAs } from '../telemetry/_store-calls.js'
import type { MaybePromise } from '../types.js'
import { readStoreSetting, type StoreSetting, type StoreSettingOptions } from './_store-setting.js'
import { createMemoryStore } from './memory.js'
import type { ClusterLink, TaskStore } from './task-store.js'

type LoadedKind = Exclude<StoreSetting, { kind: 'memory' }>

/** The optional methods a caller tests for (`store.snapshot ? … : …`): the stand-in has exactly the store's. */
type OptionalMethod = 'lastSeq' | 'snapshot' | 'reachable'

/**
 * What a store of each kind shows before its module has loaded: its optional methods and its cluster link's flags (the
 * engine reads them synchronously); a store with a cluster link keeps push configs too. test/runtime/lazy-store.test.ts
 * holds each to the made store's own.
 */
const STORE_SHAPES: Record<
  LoadedKind['kind'],
  { methods: readonly OptionalMethod[]; cluster?: Pick<ClusterLink, 'claimsOnCreate' | 'createJoinsFirstEvents'> }
> = {
  file: { methods: ['lastSeq'] },
  redis: { methods: ['lastSeq', 'snapshot', 'reachable'], cluster: { claimsOnCreate: true } },
  postgres: {
    methods: ['lastSeq', 'snapshot', 'reachable'],
    cluster: { claimsOnCreate: true, createJoinsFirstEvents: true },
  },
}

/**
 * The store `A2A_STORE` names, as an app made from the setting uses it: the setting is read and checked at once
 * (a bad one throws its `ConfigurationError` here), but the file, Redis and PostgreSQL stores' modules (some 200 KB
 * that a start on the memory store would otherwise read and compile) load only for the store named, in its `ready()`,
 * which `serveAgent` and `serveAgents` await before listening. An app that is never served that way loads it at its
 * first call: every method waits for the load. A store that fails to be made (its directory unwritable) fails
 * `ready()` with a `ConfigurationError` saying why, which stops the start, and every other call after with a 503
 * `ServerUnavailableError` saying the same.
 */
export function lazyStoreFromSetting(setting: string, options: StoreSettingOptions = {}): TaskStore {
  const named = readStoreSetting(setting, options)
  if (named.kind === 'memory') return createMemoryStore({ env: named.env })
  return lazyStore(named, () => makeStore(named))
}

async function makeStore(named: LoadedKind): Promise<TaskStore> {
  switch (named.kind) {
    case 'file':
      return (await import('./file/store.js')).createFileStore(named.options)
    case 'redis':
      return (await import('./redis/store.js')).createRedisStore(named.options)
    case 'postgres':
      return (await import('./postgres/store.js')).createPostgresStore(named.options)
  }
}

/** A store of kind `named.kind` that `make` makes at its first use; once made, every call goes straight to it. */
function lazyStore(named: Pick<LoadedKind, 'kind'>, make: () => Promise<TaskStore>): TaskStore {
  const shape = STORE_SHAPES[named.kind]
  let made: TaskStore | undefined
  let making: Promise<TaskStore> | undefined
  let closed = false
  // What the engine asked of the cluster link before the store was made (its cancel and lost-lease handlers).
  const onLink: Array<(link: ClusterLink) => void> = []
  const load = (): Promise<TaskStore> => {
    // Closed before it was ever made: a call after the app closed makes no store (a file store would take its
    // directory's lock again, and nothing would close it).
    if (!making && closed) return Promise.reject(new ServerUnavailableError('The task store is closed', 503))
    making ??= make().then(
      (store) => {
        reportAs(store, standIn)
        const link = store.cluster
        if (link) for (const register of onLink.splice(0)) register(link)
        made = store
        return store
      },
      (error: unknown) => {
        throw storeFailure(error)
      },
    )
    return making
  }
  // A request to a store that could not be made is answered 503 with the reason, as a store out of reach is (a start
  // stops at `ready()` with the ConfigurationError itself): an app served some other way, never `ready()`, sees it
  // only there.
  const loadForCall = (): Promise<TaskStore> =>
    load().catch((error: unknown) => {
      throw error instanceof ConfigurationError ? new ServerUnavailableError(error.message, 503) : error
    })
  const call = <T>(use: (store: TaskStore) => MaybePromise<T>): MaybePromise<T> =>
    made ? use(made) : loadForCall().then(use)
  const lazy: TaskStore = {
    keepsOwners: true,
    get: (taskId, owner) => call((store) => store.get(taskId, owner)),
    create: (task, owner) => call((store) => store.create(task, owner)),
    append: (task, event) => call((store) => store.append(task, event)),
    events: (taskId, afterSeq) => call((store) => store.events(taskId, afterSeq)),
    list: (query) => call((store) => store.list(query)),
    ready: () => load().then((store) => store.ready?.()),
    // A store never made has nothing to close; one being made is closed once it is.
    close: () => {
      closed = true
      return making?.then(
        (store) => store.close?.(),
        () => undefined,
      )
    },
  }
  const methods: Pick<TaskStore, OptionalMethod> = {
    lastSeq: (taskId) => call((store) => store.lastSeq!(taskId)),
    snapshot: (taskId, owner) => call((store) => store.snapshot!(taskId, owner)),
    reachable: () => loadForCall().then((store) => store.reachable!()),
  }
  for (const method of shape.methods) Object.assign(lazy, { [method]: methods[method] })
  // What else the made store has (the file store's `size` and `bytes`, PostgreSQL's `schema`…) is read from it.
  const standIn = new Proxy(lazy, {
    get(target, key) {
      if (Reflect.has(target, key) || !made) return Reflect.get(target, key)
      const value: unknown = Reflect.get(made, key)
      return typeof value === 'function' ? value.bind(made) : value
    },
    has: (target, key) => Reflect.has(target, key) || (made !== undefined && Reflect.has(made, key)),
  })
  if (!shape.cluster) return standIn
  const link = (): Promise<ClusterLink> => loadForCall().then((store) => store.cluster!)
  const pushConfigs: PushConfigStore = {
    save: (config) => call((store) => store.pushConfigs!.save(config)),
    list: (taskId) => call((store) => store.pushConfigs!.list(taskId)),
    delete: (taskId, id) => call((store) => store.pushConfigs!.delete(taskId, id)),
  }
  const cluster: ClusterLink = {
    ...shape.cluster,
    claim: (taskId) => (made ? made.cluster!.claim(taskId) : link().then((to) => to.claim(taskId))),
    release: (taskId) => (made ? made.cluster!.release(taskId) : link().then((to) => to.release(taskId))),
    cancel: (taskId) => (made ? made.cluster!.cancel(taskId) : link().then((to) => to.cancel(taskId))),
    follow(taskId, afterSeq, onEvent) {
      if (made) return made.cluster!.follow(taskId, afterSeq, onEvent)
      let stop: (() => void) | undefined
      let stopped = false
      // A store that cannot be made has no events to follow: the reads beside the follow say why.
      link().then((to) => {
        if (!stopped) stop = to.follow(taskId, afterSeq, onEvent)
      }, noop)
      return () => {
        stopped = true
        stop?.()
      }
    },
    onCancel(handler) {
      if (made) made.cluster!.onCancel(handler)
      else onLink.push((to) => to.onCancel(handler))
    },
    onLost(handler) {
      if (made) made.cluster!.onLost(handler)
      else onLink.push((to) => to.onLost(handler))
    },
  }
  Object.assign(lazy, { cluster, pushConfigs })
  return standIn
}

const noop = () => {}

/**
 * A store that could not be made stops the start (`refuseUnservableStore` stops it on a `ConfigurationError` only):
 * made at once, as it was before it loaded lazily, its error would have been thrown by `createA2AApp`.
 */
function storeFailure(error: unknown): ConfigurationError {
  if (error instanceof ConfigurationError) return error
  const failure = new ConfigurationError(`A2A_STORE: ${error instanceof Error ? error.message : String(error)}`)
  failure.cause = error
  return failure
}
