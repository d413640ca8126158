// Shared by the benchmarks: a seeded PRNG, the command-line settings (--quick and others) and the results the runner summarizes.
import { appendFileSync } from 'node:fs';

export type Random = () => number;

/** Deterministic PRNG (mulberry32). */
export const prng = (seed: number): Random => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
};

/** The value of `--name value` or `--name=value` on the command line, if given. */
export const argValue = (name: string): string | undefined => {
  const args = process.argv.slice(2);
  const i = args.indexOf(name);
  if (i >= 0) return args[i + 1];
  return args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
};

/** Parses a positive integer setting (underscores allowed), or the fallback when absent; throws on anything else. */
export const positiveInt = (text: string | undefined, fallback: number, what: string): number => {
  if (text === undefined || text === '') return fallback;
  const n = Number(text.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < 1) throw new Error(`${what} must be a positive integer, got ${JSON.stringify(text)}`);
  return n;
};

/** Whether the bench was asked for a small, quick run (`npm run bench -- --quick` passes `--quick` to every bench). */
export const quick = process.argv.slice(2).includes('--quick');

/** One figure of a bench for the runner's summary table. */
export interface BenchResult {
  /** What was measured, e.g. `single append ÷ raw put`. */
  readonly measure: string;
  /** The figure as printed, e.g. `0.64` or `2.4x`. */
  readonly value: string;
  /** The target, as printed (e.g. `>= 0.65`), or '' when the figure is informative. */
  readonly target: string;
  /** PASS / MISS, or '' when there is no target. */
  readonly verdict: 'PASS' | 'MISS' | '';
}

/**
 * Hands a bench's key figures to `bench/run.ts`, which prints them all in one table at the end (the file named by
 * `$BENCH_RESULTS_FILE`, one JSON object per line); does nothing when the bench runs on its own.
 */
export const reportResults = (bench: string, results: readonly BenchResult[]): void => {
  const file = process.env['BENCH_RESULTS_FILE'];
  if (file === undefined || file === '') return;
  appendFileSync(file, results.map((result) => `${JSON.stringify({ bench, ...result })}\n`).join(''));
};
