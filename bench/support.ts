// Shared by the benchmarks: a seeded PRNG, the command-line settings (--quick and others) and the results the runner summarizes.
import { appendFileSync } from 'node:fs';
import { loadavg } from 'node:os';

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
  /** PASS / MISS, or '' when there is no target (or the bench did not run at the size the target was set at). */
  readonly verdict: 'PASS' | 'MISS' | '';
  /** The load average while it was measured (filled in by {@link reportResults} when absent): ratios wobble with it. */
  readonly load?: string;
}

/**
 * A figure against its target, judged only when the bench ran at the size the target was set at (`setAt`
 * undefined); otherwise printed as `informative (target … at N)`, with no verdict: a target set for 100,000 events
 * says nothing of a run of 5,000 (`npm run bench -- --quick`).
 * @example judged('concurrent append ÷ raw', '0.58', '>= 0.7', 0.58 >= 0.7, EVENTS === 100_000 ? undefined : '100,000 events')
 */
export const judged = (measure: string, value: string, target: string, pass: boolean, setAt?: string, load?: string): BenchResult => ({
  measure,
  value,
  target: setAt === undefined ? target : `informative (target ${target === '' ? '' : `${target} `}at ${setAt})`,
  verdict: setAt === undefined ? (pass ? 'PASS' : 'MISS') : '',
  ...(load !== undefined ? { load } : {}),
});

/** What a verdict prints as in a bench's own table: PASS / MISS, or `informative (target at N)`. */
export const verdictText = (pass: boolean, setAt?: string): string => (setAt === undefined ? (pass ? 'PASS' : 'MISS') : `informative (target at ${setAt})`);

/** The 1-minute load average now, e.g. `3.2`. */
export const loadNow = (): string => (loadavg()[0] ?? NaN).toFixed(1);

/** The range of 1-minute load averages sampled during a measurement, e.g. `2.9–3.4`. */
export const loadRange = (samples: readonly number[]): string =>
  samples.length === 0 ? loadNow() : `${Math.min(...samples).toFixed(1)}–${Math.max(...samples).toFixed(1)}`;

/**
 * Hands a bench's key figures to `bench/run.ts`, which prints them all in one table at the end (the file named by
 * `$BENCH_RESULTS_FILE`, one JSON object per line); does nothing when the bench runs on its own.
 */
export const reportResults = (bench: string, results: readonly BenchResult[]): void => {
  const file = process.env['BENCH_RESULTS_FILE'];
  if (file === undefined || file === '') return;
  const load = loadNow();
  appendFileSync(file, results.map((result) => `${JSON.stringify({ bench, load, ...result })}\n`).join(''));
};

/** The load average now, to print beside every ratio (other processes share the machine): `load 3.2 / 2.9 / 2.5 (1 / 5 / 15 min)`. */
export const loadLabel = (): string => `load ${loadavg().map((value) => value.toFixed(1)).join(' / ')} (1 / 5 / 15 min)`;
