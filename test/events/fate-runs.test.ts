// Fates as runs: encode/decode round trip, the grammar, errors that name the bad run, fatesOf with ids, countFateRuns.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  FATES,
  FATE_RULES,
  FATE_RUNS_PATTERN,
  countFateRuns,
  decodeFateRuns,
  encodeFateRuns,
  encodeReportFates,
  fatesOf,
  sentIdsOf,
  type Fate,
  type FateRule,
} from '../../src/events/index.js';

describe('fate runs', () => {
  it('encodes consecutive equal fates as one run, and decodes back', () => {
    const fates = [
      { fate: 'dropped', rule: 'maxTokens' },
      { fate: 'dropped', rule: 'maxTokens' },
      { fate: 'dropped', rule: 'maxTokens' },
      { fate: 'kept', rule: 'tail' },
      { fate: 'cleared', rule: 'tier1' },
      { fate: 'kept', rule: 'tail' },
    ] as const;
    const runs = encodeFateRuns(fates);
    expect(runs).toBe('dropped:maxTokens*3 kept:tail cleared:tier1 kept:tail');
    expect(FATE_RUNS_PATTERN.test(runs)).toBe(true);
    expect(decodeFateRuns(runs).map((r) => [r.start, r.count])).toEqual([[0, 3], [3, 1], [4, 1], [5, 1]]);
    expect(fatesOf({ fateRuns: runs }).map((f) => `${f.fate}/${f.rule}`)).toEqual(fates.map((f) => `${f.fate}/${f.rule}`));
    expect(encodeFateRuns([])).toBe('');
    expect(decodeFateRuns('')).toEqual([]);
  });

  it('writes a repeating pattern of runs once, as a group with a repeat count', () => {
    const alternating = [
      { fate: 'kept', rule: 'pinned' },
      ...Array.from({ length: 40 }, (_, i) => ({ fate: i % 2 === 0 ? 'kept' : 'cleared', rule: i % 2 === 0 ? 'tail' : 'tier1' })),
      { fate: 'kept', rule: 'tail' },
      { fate: 'kept', rule: 'tail' },
    ] as { fate: 'kept' | 'cleared'; rule: 'pinned' | 'tail' | 'tier1' }[];
    const runs = encodeFateRuns(alternating);
    expect(runs).toBe('kept:pinned (kept:tail cleared:tier1)*20 kept:tail*2');
    expect(FATE_RUNS_PATTERN.test(runs)).toBe(true);
    expect(fatesOf({ fateRuns: runs }).map((f) => `${f.fate}/${f.rule}`)).toEqual(alternating.map((f) => `${f.fate}/${f.rule}`));
    for (const bad of ['(kept:tail)*2x', '(kept:tail cleared:tier1)', '(kept:tail cleared:tier1)*0', '((kept:tail))*2', '(kept:tail cleared:tier1*2']) {
      expect(FATE_RUNS_PATTERN.test(bad), bad).toBe(false);
    }
    expect(() => decodeFateRuns('(kept:tail cleared:tier1')).toThrow('unclosed fate run group');
  });

  it('gives ids with fatesOf(event, ids) and the sent ids with sentIdsOf', () => {
    const event = { fateRuns: 'dropped:maxItems*2 kept:pinned' };
    expect(fatesOf(event, ['1:0', '2:0', '3:0']).map((f) => f.id)).toEqual(['1:0', '2:0', '3:0']);
    expect(sentIdsOf(event, ['1:0', '2:0', '3:0'])).toEqual(['3:0']);
    expect(() => fatesOf(event, ['1:0'])).toThrow('the fates cover 3 item(s) but 1 id(s) were given');
  });

  it('rejects bad runs by name, and bad report fates by index', () => {
    for (const bad of ['kept', 'kept:nope', 'gone:tail', 'kept:tail*0', 'kept:tail*x', 'kept:tail  kept:tail', ' kept:tail', 'kept:tail ']) {
      expect(FATE_RUNS_PATTERN.test(bad), bad).toBe(false);
    }
    expect(() => decodeFateRuns('kept:tail gone:tail')).toThrow('bad fate run "gone:tail"');
    expect(() => encodeReportFates([{ index: 0, fate: 'kept', rule: 'tail' }], 2)).toThrow('source item 1 has no fate');
    expect(() => encodeReportFates([{ index: 0, fate: 'kept', rule: 'tail' }, { index: 0, fate: 'kept', rule: 'tail' }], 1)).toThrow('more than one fate');
    expect(() => encodeReportFates([{ index: 3, fate: 'kept', rule: 'tail' }], 1)).toThrow('fate for index 3');
  });

  it('round-trips any fate list, in any order of report fates (property)', () => {
    const fate = fc.record({ fate: fc.constantFrom(...FATES), rule: fc.constantFrom(...FATE_RULES) });
    fc.assert(
      fc.property(fc.array(fc.oneof(fate, fc.constant({ fate: 'kept' as const, rule: 'tail' as const }), fc.constant({ fate: 'cleared' as const, rule: 'tier1' as const })), { maxLength: 80 }), fc.boolean(), (fates, reverse) => {
        const indexed = fates.map((f, index) => ({ index, ...f }));
        const runs = encodeReportFates(reverse ? [...indexed].reverse() : indexed, fates.length);
        expect(FATE_RUNS_PATTERN.test(runs)).toBe(true);
        expect(fatesOf({ fateRuns: runs })).toEqual(indexed);
        // Expanded, one run per change of fate or rule; written, never more tokens than that.
        const changes = fates.filter((f, i) => i === 0 || f.fate !== fates[i - 1]!.fate || f.rule !== fates[i - 1]!.rule).length;
        expect(decodeFateRuns(runs)).toHaveLength(changes);
        expect(runs === '' ? 0 : runs.split(' ').length).toBeLessThanOrEqual(changes);
      }),
    );
  });
});

// countFateRuns counts without expanding repeated groups, and agrees with decoding them; the fate law uses it.
describe('countFateRuns', () => {
  it('counts a repeated group without expanding it', () => {
    expect(countFateRuns('')).toEqual({ total: 0, dropped: 0 });
    expect(countFateRuns('(kept:tail dropped:maxItems*2)*1000000 kept:pinned')).toEqual({ total: 3_000_001, dropped: 2_000_000 });
    expect(() => countFateRuns('(kept:tail')).toThrow(/unclosed/);
    expect(() => countFateRuns('kept:nonsense')).toThrow();
  });

  it('agrees with decodeFateRuns on every encoded list of fates', () => {
    const fate = fc.constantFrom<[Fate, FateRule]>(['kept', 'tail'], ['dropped', 'maxItems'], ['cleared', 'tier1'], ['dropped', 'pairing'], ['kept', 'pinned']);
    fc.assert(
      fc.property(fc.array(fate, { maxLength: 60 }), (list) => {
        const runs = encodeFateRuns(list.map(([f, rule]) => ({ fate: f, rule })));
        const decoded = decodeFateRuns(runs);
        expect(countFateRuns(runs)).toEqual({
          total: decoded.reduce((n, r) => n + r.count, 0),
          dropped: decoded.filter((r) => r.fate === 'dropped').reduce((n, r) => n + r.count, 0),
        });
      }),
    );
  });
});
