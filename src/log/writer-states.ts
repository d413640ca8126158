// How many per-session writer states a log holds: a diagnostic the contract suite reads to check that idle ones are released.
import type { SessionEventLog } from './types.js';

const counts = new WeakMap<SessionEventLog, () => number>();

/** Called by a store once it has built its log: `count` says how many per-session writer states it holds now. */
export const registerWriterStates = (log: SessionEventLog, count: () => number): void => {
  counts.set(log, count);
};

/**
 * How many per-session writer states (queue, cached head) a log built by this library holds: idle ones past 256 are
 * released, so it stays bounded however many sessions the log writes. 0 for a log it does not know.
 */
export const writerStateCount = (log: SessionEventLog): number => counts.get(log)?.() ?? 0;
