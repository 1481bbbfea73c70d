import type { ClientCall, ClientInstrumentation } from './_client-hooks.js'
import type { HookedStream, Instrumentation, Operation } from './_hooks.js'

/**
 * Instrumentations that cannot hurt what they watch. An SDK's span processor or exporter that throws (the API lets
 * its errors through: a processor's onStart and onEnd are called bare) must not fail, delay or change an operation,
 * a store call, a task event or a client call: each hook runs guarded, its error reported once (the first: a broken
 * exporter would otherwise write a line per span), and the runtime carries on as without telemetry.
 */

/** Told of an instrumentation's first error. */
export type Report = (error: unknown) => void

/** `report` called for the first error only. */
export function reportOnce(report: Report): Report {
  let reported = false
  return (error) => {
    if (reported) return
    reported = true
    report(error)
  }
}

/** The warning an instrumentation's first error is logged with. */
export const INSTRUMENTATION_FAILED =
  'Telemetry failed (it is left out from here on where it fails; the A2A operations are not)'

/** `hook()`, or `fallback` (reported) when it throws. */
function safely<T>(report: Report, fallback: T, hook: () => T): T {
  try {
    return hook()
  } catch (error) {
    report(error)
    return fallback
  }
}

/**
 * Runs `work` once through `wrapper` (which runs it in a context): an error of `work` goes to the caller as it is;
 * an error of the wrapper alone is reported, and `work` runs bare (or its answer is kept, when it already ran).
 */
function runGuarded<T>(report: Report, wrapper: (work: () => T) => T, work: () => T): T {
  let ran = false
  let answer: T
  let failure: { error: unknown } | undefined
  try {
    return wrapper(() => {
      ran = true
      try {
        answer = work()
      } catch (error) {
        failure = { error }
        throw error
      }
      return answer
    })
  } catch (error) {
    if (failure) throw failure.error
    report(error)
    if (ran) return answer!
    return work()
  }
}

/** Every hook of `inner` guarded: what it throws is reported, never passed to the runtime. */
export function guardedInstrumentation(inner: Instrumentation, report: Report): Instrumentation {
  return {
    operation: (start) => {
      const operation = safely(report, undefined, () => inner.operation(start))
      return operation && guardedOperation(operation, report)
    },
    turnStarted: (task, message) => safely(report, undefined, () => inner.turnStarted(task, message)),
    taskEvent: (task, event) => safely(report, undefined, () => inner.taskEvent(task, event)),
    currentTrace: () => safely(report, undefined, () => inner.currentTrace()),
    eventTrace: () => safely(report, undefined, () => inner.eventTrace()),
    pushAttempt: (attempt) => {
      const done = safely(report, undefined, () => inner.pushAttempt(attempt))
      return done && ((outcome) => safely(report, outcome, () => done(outcome)))
    },
    pushDelivered: (outcome) => safely(report, undefined, () => inner.pushDelivered(outcome)),
    storeCall: (call, io) => guardedStoreCall(report, (run) => inner.storeCall(call, run), io),
    observe: (sources) => {
      const stop = safely(report, undefined, () => inner.observe(sources))
      return () => {
        if (stop) safely(report, undefined, stop)
      }
    },
  }
}

/**
 * A store call: `io` runs once whatever the instrumentation does, and the call answers what `io` answers, an
 * instrumentation's error (a span that fails to end after the write) kept apart from the store's.
 */
function guardedStoreCall<T>(report: Report, traced: (io: () => Promise<T>) => Promise<T>, io: () => Promise<T>) {
  let running: Promise<T> | undefined
  const once = () => {
    running ??= io()
    return running
  }
  let answered: Promise<T>
  try {
    answered = traced(once)
  } catch (error) {
    report(error)
    return once()
  }
  return answered.then(
    (value) => value,
    async (error: unknown) => {
      if (!running) {
        report(error)
        return once()
      }
      // The store's own outcome; the instrumentation's error is reported unless it is the store's.
      return running.then(
        (value) => {
          report(error)
          return value
        },
        (ioError: unknown) => {
          if (ioError !== error) report(error)
          throw ioError
        },
      )
    },
  )
}

function guardedOperation(inner: Operation, report: Report): Operation {
  return {
    run: (method) => runGuarded(report, (work) => inner.run(work), method),
    streamOpened: (stream) => guardedStream(stream, report, (tracked) => inner.streamOpened(tracked)),
    returned: (result) => safely(report, undefined, () => inner.returned(result)),
    failed: (error) => safely(report, undefined, () => inner.failed(error)),
  }
}

/**
 * The instrumentation's view of a stream, guarded: a frame, a close and the client's leaving reach the stream and the
 * method once each, whatever the instrumentation's part of them throws. The instrumentation is handed a stream that
 * notes what reached the real one, so that what it failed to pass on is passed here, and nothing twice.
 */
function guardedStream(stream: HookedStream, report: Report, open: (tracked: HookedStream) => HookedStream) {
  let sent = false
  let closed = false
  let cancelHeard: (() => void) | undefined
  /** What the stream itself threw, passed on to the caller as it is. */
  let failure: { error: unknown } | undefined
  const own = (step: () => void) => {
    try {
      step()
    } catch (error) {
      failure = { error }
      throw error
    }
  }
  const tracked: HookedStream = {
    send: (frame, seq) => {
      sent = true
      own(() => stream.send(frame, seq))
    },
    close: () => {
      closed = true
      own(() => stream.close())
    },
    onCancel: (callback) => {
      cancelHeard = callback
      stream.onCancel(callback)
    },
    get response() {
      return stream.response
    },
  }
  const hooked = safely(report, undefined, () => open(tracked))
  if (!hooked) return stream
  /** `step` through the instrumentation; `direct` when it failed before reaching the stream. */
  const through = (step: () => void, reached: () => boolean, direct: () => void) => {
    failure = undefined
    try {
      step()
    } catch (error) {
      const thrown = failure as { error: unknown } | undefined
      if (thrown) throw thrown.error
      report(error)
      if (!reached()) direct()
    }
  }
  return {
    send: (frame, seq) => {
      sent = false
      through(
        () => hooked.send(frame, seq),
        () => sent,
        () => stream.send(frame, seq),
      )
    },
    close: () => {
      if (closed) return
      through(
        () => hooked.close(),
        () => closed,
        () => stream.close(),
      )
    },
    onCancel: (callback) => {
      cancelHeard = undefined
      through(
        () => hooked.onCancel(callback),
        () => cancelHeard !== undefined,
        () => stream.onCancel(callback),
      )
    },
    get response() {
      return stream.response
    },
  } satisfies HookedStream
}

/** Every hook of a client's `inner` guarded, as the server's. */
export function guardedClientInstrumentation(inner: ClientInstrumentation, report: Report): ClientInstrumentation {
  return {
    call: (start) => {
      const call = safely(report, undefined, () => inner.call(start))
      return call ? guardedClientCall(call, report) : UNTRACED_CALL
    },
  }
}

function guardedClientCall(inner: ClientCall, report: Report): ClientCall {
  const headers = safely(report, {}, () => inner.headers)
  return {
    headers,
    run: (request) => runGuarded(report, (work) => inner.run(work), request),
    streamEvent: (response) => safely(report, undefined, () => inner.streamEvent(response)),
    returned: (result) => safely(report, undefined, () => inner.returned(result)),
    failed: (error, errorType) => safely(report, undefined, () => inner.failed(error, errorType)),
  }
}

/** A call recorded nowhere (its instrumentation failed to begin it). */
const UNTRACED_CALL: ClientCall = {
  headers: {},
  run: (request) => request(),
  streamEvent: () => {},
  returned: () => {},
  failed: () => {},
}
