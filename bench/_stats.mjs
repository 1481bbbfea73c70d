// Latency samples and percentiles. Kept as raw float milliseconds (autocannon's own histogram has 1 ms
// resolution, too coarse for sub-millisecond loopback latencies).

export class Samples {
  #values = new Float64Array(1 << 16)
  length = 0

  push(value) {
    if (this.length === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2)
      grown.set(this.#values)
      this.#values = grown
    }
    this.#values[this.length++] = value
  }

  /** p50, p99 (nearest rank) and mean, in ms; NaN when there is no sample. */
  summary() {
    const sorted = this.#values.slice(0, this.length).sort()
    const at = (q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : NaN)
    let sum = 0
    for (const value of sorted) sum += value
    return {
      p50: at(0.5),
      p99: at(0.99),
      max: sorted.length ? sorted[sorted.length - 1] : NaN,
      mean: sorted.length ? sum / sorted.length : NaN,
    }
  }
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  if (!sorted.length) return NaN
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/**
 * The 95% interval of the geometric mean of paired ratios, by bootstrap (resampling the pairs with replacement,
 * a seeded generator so a report can be reproduced from its ratios): [low, high]. With a few rounds it is wide;
 * it narrows as rounds are added, which is what tells a real cost from the machine's noise.
 */
export function geomeanInterval(ratios, resamples = 10_000) {
  const logs = ratios.map(Math.log)
  let seed = 0x2545f491
  const random = () => {
    // xorshift32: enough for resampling indices.
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return (seed >>> 0) / 2 ** 32
  }
  const means = new Float64Array(resamples)
  for (let r = 0; r < resamples; r++) {
    let sum = 0
    for (let i = 0; i < logs.length; i++) sum += logs[Math.floor(random() * logs.length)]
    means[r] = sum / logs.length
  }
  means.sort()
  return [Math.exp(means[Math.floor(0.025 * resamples)]), Math.exp(means[Math.ceil(0.975 * resamples) - 1])]
}
