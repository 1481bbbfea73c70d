// biome-ignore-all assist/source/organizeImports: grouped by what a reader looks for, not by path
// `a2a-runtime/store`: what a task store of your own implements (PostgreSQL, DynamoDB…), and the checks that hold
// it to the behaviours the runtime relies on.
export type { ClusterLink, MaybePromise, TaskPage, TaskQuery, TaskStore } from '../stores/task-store.js'
export type { TaskEvent } from '../types.js'
export type { PushConfig, PushConfigStore } from '../push/push-config.js'
export { InvalidParamsError, TaskNotFoundError } from '../errors.js'
export { taskStoreContract } from '../stores/contract/task-store-contract.js'
export type { StoreCheck, StoreContractOptions } from '../stores/contract/task-store-contract.js'
