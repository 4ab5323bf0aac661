/** Sorted copy of the samples. */
function sorted(samples: readonly number[]): number[] {
  if (samples.length === 0) throw new Error('no samples');
  return [...samples].sort((a, b) => a - b);
}

/** The q-quantile by the nearest-rank method (q = 0.5: median, 0.99: p99). */
export function quantile(samples: readonly number[], q: number): number {
  const values = sorted(samples);
  const rank = Math.min(values.length, Math.max(1, Math.ceil(q * values.length)));
  return values[rank - 1] as number;
}

export function median(samples: readonly number[]): number {
  const values = sorted(samples);
  const middle = Math.floor(values.length / 2);
  return values.length % 2 === 1 ? (values[middle] as number) : ((values[middle - 1] as number) + (values[middle] as number)) / 2;
}

export interface Summary {
  n: number;
  p50: number;
  p99: number;
}

export function summarize(samples: readonly number[]): Summary {
  return { n: samples.length, p50: median(samples), p99: quantile(samples, 0.99) };
}
