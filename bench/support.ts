// Shared by the benchmarks: a seeded PRNG, so every run builds the same data.

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
