// digestOf hashes the canonical JSON as it writes it (long arrays element by element, in pieces): the digest must be
// that of canonicalJson(value) byte for byte, whatever the value (issue 28 item 3: a checkpoint's digest on resume).
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, digestOf } from '../../src/base/index.js';
import { largestDigestPiece } from '../../src/base/canonical.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

// Strings with emoji (surrogate pairs), lone surrogates, quotes and control characters.
const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('😀', '\ud800', 'a"b\\c\n', ''));
const leaf = fc.oneof(text, fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.date({ noInvalidDate: true }));
const value = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', maxDepth: 5, withCrossShrink: true },
    leaf,
    fc.array(tie('node'), { maxLength: 4 }),
    // long arrays (hashed element by element) of leaves and small objects, so the values stay small
    fc.array(fc.oneof(leaf, fc.dictionary(text, leaf, { maxKeys: 3 }), fc.array(leaf, { maxLength: 3 })), { minLength: 64, maxLength: 90 }),
    fc.dictionary(text, tie('node'), { maxKeys: 5 }),
  ),
})).node;

describe('digestOf', () => {
  it('is the sha256 of canonicalJson for any value (long arrays, deep objects, emoji, lone surrogates, dates, undefined)', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(digestOf(v)).toBe(sha256(canonicalJson(v)));
      }),
      { numRuns: 300 },
    );
  });

  it('is the same for a memory-sized value hashed in pieces, with members skipped as canonicalJson skips them', () => {
    const entries = Array.from({ length: 5_000 }, (_, i) => ({
      id: `${i}:0`,
      item: { type: 'function_call_output', call_id: `c${i}`, output: `${'😀'.repeat(i % 7)}${'x'.repeat(i % 300)}`, note: undefined, fn: () => i },
    }));
    const state = { memory: { entries, summary: null, when: new Date(0) }, run: { lastStep: 3, openRun: null, skipped: Symbol('s') } };
    expect(digestOf(state)).toBe(sha256(canonicalJson(state)));
    expect(digestOf([entries])).toBe(sha256(canonicalJson([entries])));
    // never one string of the whole text (about 1.5M characters here): pieces of about 64K
    expect(canonicalJson(state).length).toBeGreaterThan(1_000_000);
    expect(largestDigestPiece()).toBeLessThan(70_000);
  });
});
