import type { Attributes, Counter, Histogram, Meter, ObservableResult } from '@opentelemetry/api'
import type { ObservedSources } from './_hooks.js'

/**
 * The runtime's OpenTelemetry instruments on one meter (the registered MeterProvider's), named and measured as
 * OpenTelemetry's conventions name theirs: durations in seconds as histograms, counts of things in progress as
 * UpDownCounters, `error.type` for an outcome that failed. The app's counts and budgets are observed: read at each
 * collection from what the app holds, never on the request path.
 */

/** Buckets of the GenAI conventions' operation durations: model turns last seconds to minutes. */
const TURN_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
/** Buckets of the HTTP conventions' request durations: one exchange with a webhook or a store. */
const IO_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
/** A person answering a question: seconds to a day. */
const WAIT_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21_600, 86_400]

const histogram = (meter: Meter, name: string, description: string, buckets: number[]): Histogram =>
  meter.createHistogram(name, { description, unit: 's', advice: { explicitBucketBoundaries: buckets } })

export class OtelMetrics {
  readonly requestDuration: Histogram
  readonly taskDuration: Histogram
  readonly inputWait: Histogram
  readonly pushDeliveries: Counter
  readonly pushRequestDuration: Histogram
  readonly storeDuration: Histogram

  constructor(meter: Meter, sources: ReadonlySet<ObservedSources>) {
    this.requestDuration = histogram(
      meter,
      'a2a.server.request.duration',
      'Duration of A2A operations (a streaming one until its stream ends)',
      TURN_BUCKETS,
    )
    this.taskDuration = histogram(
      meter,
      'a2a.server.task.duration',
      'Duration of tasks from their creation to their terminal state',
      TURN_BUCKETS,
    )
    this.inputWait = histogram(
      meter,
      'a2a.server.task.input_wait.duration',
      'How long tasks waited in input-required for the message that resumed them',
      WAIT_BUCKETS,
    )
    this.pushDeliveries = meter.createCounter('a2a.server.push.deliveries', {
      description: 'Push notifications delivered to webhooks or given up',
      unit: '{notification}',
    })
    this.pushRequestDuration = histogram(
      meter,
      'a2a.server.push.request.duration',
      'Duration of each POST of a push notification to a webhook',
      IO_BUCKETS,
    )
    this.storeDuration = histogram(
      meter,
      'a2a.server.store.operation.duration',
      'Duration of task store calls that touch disk or network',
      IO_BUCKETS,
    )
    observeSources(meter, sources)
  }
}

/** Sums what every app sharing this instrumentation holds, per attribute set: each is observed once. */
function observeSources(meter: Meter, sources: ReadonlySet<ObservedSources>): void {
  const sum = (read: (source: ObservedSources) => number) => {
    let total = 0
    for (const source of sources) total += read(source)
    return total
  }
  const byName = (result: ObservableResult, entries: (source: ObservedSources) => Iterable<[string, number]>) => {
    const totals = new Map<string, number>()
    for (const source of sources)
      for (const [name, value] of entries(source)) totals.set(name, (totals.get(name) ?? 0) + value)
    for (const [name, value] of totals) result.observe(value, { 'a2a.budget.name': name })
  }
  meter
    .createObservableUpDownCounter('a2a.server.active_tasks', {
      description: 'Tasks whose agent runs on this instance now',
      unit: '{task}',
    })
    .addCallback((result) => result.observe(sum((source) => source.runningTasks())))
  meter
    .createObservableUpDownCounter('a2a.server.active_streams', {
      description: 'Streams open to subscribers now (SSE and gRPC)',
      unit: '{stream}',
    })
    .addCallback((result) => result.observe(sum((source) => source.openStreams())))
  meter
    .createObservableUpDownCounter('a2a.server.budget.usage', {
      description: 'Bytes held against each memory budget now',
      unit: 'By',
    })
    .addCallback((result) => byName(result, (source) => source.budgets.map((b) => [b.name, b.used()])))
  meter
    .createObservableUpDownCounter('a2a.server.budget.limit', { description: 'Each memory budget', unit: 'By' })
    .addCallback((result) => byName(result, (source) => source.budgets.map((b) => [b.name, b.limit])))
  meter
    .createObservableCounter('a2a.server.budget.refusals', {
      description: 'What each budget refused: requests, streams, answers, task growth',
      unit: '{refusal}',
    })
    .addCallback((result) => byName(result, (source) => source.refusals.map((r) => [r.name, r.count()])))
}

/** The attributes of a push attempt's or delivery's outcome. */
export function pushOutcomeAttributes(outcome: { delivered: boolean; status?: number; error?: string }): Attributes {
  const attributes: Attributes = {}
  if (outcome.status !== undefined) attributes['http.response.status_code'] = outcome.status
  if (!outcome.delivered)
    attributes['error.type'] = outcome.status !== undefined ? String(outcome.status) : (outcome.error ?? '_OTHER')
  return attributes
}
