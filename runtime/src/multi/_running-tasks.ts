/**
 * How many tasks a server of several agents runs now, kept beside its app (the app's public type stays as it is): a
 * graceful close keeps listening while any runs, as it does for one agent's app (node/_shutdown.ts).
 */
const runningOf = new WeakMap<object, () => number>()

export function keepRunningCount(app: object, running: () => number): void {
  runningOf.set(app, running)
}

/** The running count of an app `createAgentsApp` made; undefined for any other. */
export const runningCountOf = (app: object): (() => number) | undefined => runningOf.get(app)
