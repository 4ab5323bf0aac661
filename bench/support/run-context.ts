import { performance } from 'node:perf_hooks';
import type { BuiltBundle } from './bundling';
import type { Row, TargetCheck } from './report';

/** How much of each measure a run takes: the full run's figures are the recorded ones. */
export interface BenchSettings {
  /** Fresh node processes per bundle for cold init. */
  coldRuns: number;
  warmIterations: number;
  warmup: number;
  /** Invocations per contender and added delay in the round-trip measure. */
  roundTripIterations: number;
  countedRequests: number;
  largeList: number;
  listIterations: number;
  autocannonSeconds: number;
}

export const fullSettings: BenchSettings = {
  coldRuns: 31,
  warmIterations: 2_000,
  warmup: 200,
  roundTripIterations: 500,
  countedRequests: 500,
  largeList: 100_000,
  listIterations: 2_000,
  autocannonSeconds: 10,
};
export const quickSettings: BenchSettings = {
  coldRuns: 5,
  warmIterations: 300,
  warmup: 50,
  roundTripIterations: 100,
  countedRequests: 200,
  largeList: 10_000,
  listIterations: 300,
  autocannonSeconds: 3,
};

/**
 * The round trip added to every DynamoDB request. The measure counts round
 * trips, so the figure need not be DynamoDB's: only large against the relay's
 * timer grain (1 ms) and the machine's noise.
 */
export const ADDED_ROUND_TRIP_MS = 10;

/** What every measure reads (settings, bundles) and adds to (rows of the table, targets, notes). */
export interface BenchRun {
  quick: boolean;
  settings: BenchSettings;
  bundle(name: string): BuiltBundle;
  rows: Row[];
  checks: TargetCheck[];
  notes: string[];
  progress(message: string): void;
}

export function progressReporter(): (message: string) => void {
  const startedAt = performance.now();
  return (message) => {
    const seconds = Math.round((performance.now() - startedAt) / 1000);
    process.stderr.write(
      `[bench ${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}] ${message}\n`,
    );
  };
}

export const fmt = {
  bytes: (value: number) => `${Math.round(value / 1024).toLocaleString('en-US')} KiB`,
  ms: (value: number) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)),
  us: (value: number) => (value * 1000).toFixed(0),
};

/** A target on a ratio: the check for the summary and chart, and the cell of the table. */
export function ratioTarget(run: BenchRun, label: string, ratio: number, limit: number, detail: string): string {
  const met = ratio <= limit;
  run.checks.push({ label, ratio, limit, met, detail });
  return met ? 'yes' : 'NO';
}
