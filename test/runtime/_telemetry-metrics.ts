import { metrics } from '@opentelemetry/api'
import { type DataPoint, MeterProvider, type MetricData, MetricReader } from '@opentelemetry/sdk-metrics'
import { afterEach, beforeEach } from 'vitest'

/** A reader that exports nothing: the test collects when it wants to look. */
class ReadOnDemand extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve()
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve()
  }
}

/**
 * An OpenTelemetry MeterProvider as an app registers one, read through an in-memory MetricReader: registered for each
 * test and unregistered after it. Reads the runtime's own instruments (scope `a2a-runtime`).
 */
export function recordedMetrics() {
  let reader = new ReadOnDemand()
  const providers: MeterProvider[] = []
  const register = () => {
    reader = new ReadOnDemand()
    const provider = new MeterProvider({ readers: [reader] })
    providers.push(provider)
    metrics.disable()
    metrics.setGlobalMeterProvider(provider)
  }
  beforeEach(register)
  afterEach(async () => {
    metrics.disable()
    await Promise.all(providers.splice(0).map((provider) => provider.shutdown()))
  })
  const collect = async (): Promise<MetricData[]> => {
    const { resourceMetrics } = await reader.collect()
    return resourceMetrics.scopeMetrics.filter((scope) => scope.scope.name === 'a2a-runtime').flatMap((s) => s.metrics)
  }
  /** The data points of `name` whose attributes include `attributes`. */
  const points = async (name: string, attributes: Record<string, unknown> = {}): Promise<DataPoint<any>[]> => {
    const metric = (await collect()).find((m) => m.descriptor.name === name)
    return ((metric?.dataPoints ?? []) as DataPoint<any>[]).filter((point) =>
      Object.entries(attributes).every(([key, value]) => point.attributes[key] === value),
    )
  }
  return {
    /** Registers another MeterProvider, read from now on (the earlier one is no longer the global one). */
    register,
    collect,
    points,
    /** The one data point of `name` with exactly `attributes`, or undefined. */
    async point(name: string, attributes: Record<string, unknown>): Promise<DataPoint<any> | undefined> {
      const exact = (await points(name, attributes)).filter(
        (point) => Object.keys(point.attributes).length === Object.keys(attributes).length,
      )
      if (exact.length > 1) throw new Error(`${exact.length} points of ${name} with ${JSON.stringify(attributes)}`)
      return exact[0]
    },
    /** What a histogram's point with exactly `attributes` counted (0 for none). */
    async count(name: string, attributes: Record<string, unknown>): Promise<number> {
      const exact = (await points(name, attributes)).filter(
        (point) => Object.keys(point.attributes).length === Object.keys(attributes).length,
      )
      return exact.reduce((sum, point) => sum + (typeof point.value === 'number' ? point.value : point.value.count), 0)
    },
  }
}
