// The checks every SessionEventLog backend makes the same way: read ranges, expected seqs, checkpoint seqs and bands.
import { InvalidOptionsError } from '../base/errors.js';
import { ExpectedSeqConflictError, InvalidCheckpointError, SeqLimitError } from './errors.js';
import { MAX_SEQ } from './session-key.js';
import type { StoredCheckpoint } from './types.js';

/**
 * A `fromSeq`/`toSeq` option of `read`: absent, or a non-negative integer (else InvalidOptionsError).
 * @example seqOption('fromSeq', 3) // 3; seqOption('toSeq', -1) // throws
 */
export const seqOption = (name: string, value: number | undefined): number | undefined => {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 0) {
    throw new InvalidOptionsError('read', [{ path: name, message: `must be a non-negative integer, got ${String(value)}` }]);
  }
  return value;
};

/**
 * The seqs a `read` covers: from `fromSeq` (at least 1) to `toSeq` (at most MAX_SEQ), or undefined when that is empty.
 * @example readRange({ fromSeq: 0 }) // { fromSeq: 1, toSeq: MAX_SEQ }; readRange({ fromSeq: 5, toSeq: 4 }) // undefined
 */
export const readRange = (options: { readonly fromSeq?: number | undefined; readonly toSeq?: number | undefined }): { fromSeq: number; toSeq: number } | undefined => {
  const fromSeq = Math.max(1, seqOption('fromSeq', options.fromSeq) ?? 1);
  const toSeq = Math.min(MAX_SEQ, seqOption('toSeq', options.toSeq) ?? MAX_SEQ);
  return toSeq < fromSeq ? undefined : { fromSeq, toSeq };
};

/**
 * The `expectedSeq` option of `append`: absent, or a non-negative integer (else InvalidOptionsError).
 * @example expectedSeqOption(0) // 0; expectedSeqOption(1.5) // throws
 */
export const expectedSeqOption = (expectedSeq: number | undefined): number | undefined => {
  if (expectedSeq !== undefined && (!Number.isInteger(expectedSeq) || expectedSeq < 0)) {
    throw new InvalidOptionsError('append', [{ path: 'expectedSeq', message: `must be a non-negative integer, got ${String(expectedSeq)}` }]);
  }
  return expectedSeq;
};

/**
 * Why an append of `count` events on a session whose head is `headSeq` is refused, or undefined when it may be
 * written: a stale `expectedSeq` (ExpectedSeqConflictError), or seqs past MAX_SEQ (SeqLimitError).
 * @example appendRefusal('s', 3, 4, 1) // ExpectedSeqConflictError (expected 3, head 4)
 */
export const appendRefusal = (
  sessionId: string,
  expectedSeq: number | undefined,
  headSeq: number,
  count: number,
): ExpectedSeqConflictError | SeqLimitError | undefined => {
  if (expectedSeq !== undefined && expectedSeq !== headSeq) return new ExpectedSeqConflictError(sessionId, expectedSeq, headSeq);
  if (headSeq + count > MAX_SEQ) return new SeqLimitError(sessionId);
  return undefined;
};

/**
 * The `seq` of `checkpointAtOrBefore`, checked before the head is read: a non-negative number (else
 * InvalidOptionsError), rounded down and capped at MAX_SEQ. The highest seq to look at is `Math.min(head, it)`.
 * @example checkpointQuerySeq(7.5) // 7; checkpointQuerySeq(Infinity) // MAX_SEQ
 */
export const checkpointQuerySeq = (seq: number): number => {
  if (typeof seq !== 'number' || Number.isNaN(seq) || seq < 0) {
    throw new InvalidOptionsError('checkpointAtOrBefore', [{ path: 'seq', message: `must be a non-negative number, got ${String(seq)}` }]);
  }
  return Math.floor(Math.min(seq, MAX_SEQ));
};

/**
 * Checks a `putCheckpoint` before the head is read: the checkpoint's seq is a positive integer (InvalidCheckpointError)
 * and `band`, when given, a positive integer (InvalidOptionsError).
 * @example checkCheckpointPut('s', { seq: 0, hash: 'h', data: {} }, undefined) // throws InvalidCheckpointError
 */
export const checkCheckpointPut = (sessionId: string, checkpoint: StoredCheckpoint, band: number | undefined): void => {
  if (!Number.isInteger(checkpoint.seq) || checkpoint.seq < 1) throw new InvalidCheckpointError(sessionId, checkpoint.seq, 'seq must be a positive integer');
  if (band !== undefined && (!Number.isInteger(band) || band < 1)) {
    throw new InvalidOptionsError('putCheckpoint', [{ path: 'band', message: `must be a positive integer, got ${String(band)}` }]);
  }
};

/**
 * Refuses a checkpoint past the session's head (InvalidCheckpointError).
 * @example checkpointWithinHead('s', 12, 10) // throws: "it is past the head (10)"
 */
export const checkpointWithinHead = (sessionId: string, seq: number, head: number): void => {
  if (seq > head) throw new InvalidCheckpointError(sessionId, seq, `it is past the head (${head})`);
};

/**
 * A stored checkpoint's text as a checkpoint, or undefined when it is damaged (not JSON, or no numeric seq and
 * string hash): a damaged checkpoint is skipped, never trusted.
 * @example parseStoredCheckpoint('{"seq":4,"hash":"ab","data":{}}') // { seq: 4, hash: 'ab', data: {} }
 */
export const parseStoredCheckpoint = (text: string): StoredCheckpoint | undefined => {
  try {
    const parsed = JSON.parse(text) as StoredCheckpoint;
    if (parsed && typeof parsed === 'object' && typeof parsed.seq === 'number' && typeof parsed.hash === 'string') return parsed;
  } catch {
    // damaged: skipped
  }
  return undefined;
};
