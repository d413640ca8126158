// Helpers for the log tests: the published log-contract helpers under the names these tests use, and a temp dir.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../src/log/index.js';
import { prng } from '../../bench/support.js';
import { collect, inputs, rejectionOf, tickingClock, userInput } from '../../src/testing/log-contract.js';

export { rejectionOf };
export const collectAll = collect;
export const say = userInput;
/** `n` user inputs tagged `${tag}.i`. */
export const says = inputs;

/** A seeded PRNG (mulberry32, the benchmarks' one) so a failing run can be replayed from its printed seed. */
export const seededRandom = prng;

/** A clock one second further on each call. */
export const stepClock = (): Clock => tickingClock().clock;

/** A temp directory for one test, and its removal. */
export const tempDir = async (tag: string): Promise<{ dir: string; remove: () => Promise<void> }> => {
  const dir = await mkdtemp(join(tmpdir(), `context-ledger-${tag}-`));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
};
