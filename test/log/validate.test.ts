// The checks both log backends make alike (src/log/validate.ts), with the messages the logs' own tests pin.
import { describe, expect, it } from 'vitest';
import { isInvalidOptionsError } from '../../src/base/errors.js';
import { isExpectedSeqConflictError, isInvalidCheckpointError, isSeqLimitError } from '../../src/log/errors.js';
import { MAX_SEQ } from '../../src/log/keys.js';
import { seqOption as storeSeqOption } from '../../src/log/store.js';
import {
  appendRefusal,
  checkCheckpointPut,
  checkpointQuerySeq,
  checkpointWithinHead,
  expectedSeqOption,
  parseStoredCheckpoint,
  readRange,
  seqOption,
} from '../../src/log/validate.js';

const thrown = (run: () => unknown): unknown => {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
};

describe('log validation', () => {
  it('seqOption: absent or a non-negative integer, else InvalidOptionsError naming the option (as the store\'s copy does)', () => {
    expect(seqOption('fromSeq', undefined)).toBeUndefined();
    expect(seqOption('fromSeq', 0)).toBe(0);
    for (const bad of [-1, 1.5, Number.NaN, Infinity]) {
      const error = thrown(() => seqOption('toSeq', bad));
      expect(isInvalidOptionsError(error)).toBe(true);
      expect((error as Error).message).toBe((thrown(() => storeSeqOption('toSeq', bad)) as Error).message);
      expect((error as Error).message).toContain('toSeq');
    }
  });

  it('readRange: from at least 1, to at most MAX_SEQ, undefined when empty', () => {
    expect(readRange({})).toEqual({ fromSeq: 1, toSeq: MAX_SEQ });
    expect(readRange({ fromSeq: 0, toSeq: 0 })).toBeUndefined();
    expect(readRange({ fromSeq: 3, toSeq: 3 })).toEqual({ fromSeq: 3, toSeq: 3 });
    expect(readRange({ fromSeq: 5, toSeq: 4 })).toBeUndefined();
    expect(readRange({ toSeq: Number.MAX_SAFE_INTEGER })).toEqual({ fromSeq: 1, toSeq: MAX_SEQ });
    expect(isInvalidOptionsError(thrown(() => readRange({ fromSeq: -2 })))).toBe(true);
  });

  it('expectedSeqOption: absent or a non-negative integer', () => {
    expect(expectedSeqOption(undefined)).toBeUndefined();
    expect(expectedSeqOption(0)).toBe(0);
    const error = thrown(() => expectedSeqOption(-1));
    expect(isInvalidOptionsError(error)).toBe(true);
    expect((error as Error).message).toContain('expectedSeq: must be a non-negative integer, got -1');
  });

  it('appendRefusal: a stale expectedSeq conflicts, seqs past MAX_SEQ are refused, the rest may be written', () => {
    expect(appendRefusal('s', undefined, 4, 2)).toBeUndefined();
    expect(appendRefusal('s', 4, 4, 2)).toBeUndefined();
    const conflict = appendRefusal('s', 3, 4, 1);
    expect(isExpectedSeqConflictError(conflict)).toBe(true);
    expect(conflict).toMatchObject({ expectedSeq: 3, actualSeq: 4 });
    expect(isSeqLimitError(appendRefusal('s', undefined, MAX_SEQ - 1, 2))).toBe(true);
    expect(appendRefusal('s', undefined, MAX_SEQ - 1, 1)).toBeUndefined();
  });

  it('checkpointQuerySeq: fractions round down, capped at MAX_SEQ; a negative or NaN seq is refused', () => {
    expect(checkpointQuerySeq(Infinity)).toBe(MAX_SEQ);
    expect(checkpointQuerySeq(7.5)).toBe(7);
    expect(checkpointQuerySeq(0)).toBe(0);
    expect(isInvalidOptionsError(thrown(() => checkpointQuerySeq(-1)))).toBe(true);
    expect(isInvalidOptionsError(thrown(() => checkpointQuerySeq(Number.NaN)))).toBe(true);
  });

  it('checkCheckpointPut and checkpointWithinHead: a positive seq, a positive band, not past the head', () => {
    expect(() => checkCheckpointPut('s', { seq: 1, hash: 'h', data: {} }, undefined)).not.toThrow();
    expect(() => checkCheckpointPut('s', { seq: 1, hash: 'h', data: {} }, 100)).not.toThrow();
    expect(isInvalidCheckpointError(thrown(() => checkCheckpointPut('s', { seq: 0, hash: 'h', data: {} }, undefined)))).toBe(true);
    expect(isInvalidOptionsError(thrown(() => checkCheckpointPut('s', { seq: 1, hash: 'h', data: {} }, 0)))).toBe(true);
    expect(() => checkpointWithinHead('s', 10, 10)).not.toThrow();
    const past = thrown(() => checkpointWithinHead('s', 12, 10));
    expect(isInvalidCheckpointError(past)).toBe(true);
    expect((past as Error).message).toContain('it is past the head (10)');
  });

  it('parseStoredCheckpoint: a damaged text is skipped (undefined), never trusted', () => {
    expect(parseStoredCheckpoint('{"seq":4,"hash":"ab","data":{"x":1}}')).toEqual({ seq: 4, hash: 'ab', data: { x: 1 } });
    for (const damaged of ['', 'not json', 'null', '7', '{"seq":"4","hash":"ab"}', '{"seq":4}', '[1,2]']) {
      expect(parseStoredCheckpoint(damaged)).toBeUndefined();
    }
  });
});
