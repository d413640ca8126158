// countFateRuns counts without expanding repeated groups, and agrees with decoding them; the fate law uses it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countFateRuns, decodeFateRuns, encodeFateRuns, type Fate, type FateRule } from '../../src/events/index.js';

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
