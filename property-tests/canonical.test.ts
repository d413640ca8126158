// canonicalJson's fast paths (strings written without JSON.stringify, keys sorted in place) give the text of the plain ones.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortKeysInPlace } from '../src/base/canonical.js';
import { canonicalJson } from '../src/base/index.js';

/** Strings with what JSON escapes (quotes, backslashes, control characters, lone and paired surrogates) mixed in. */
const trickyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('"', '\\', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800', '\udc00', '\ud83d\ude00', 'a', 'é'), maxLength: 8 }),
);

describe('canonicalJson of strings', () => {
  it('is JSON.stringify for any string, alone, as a value and as a key', () => {
    fc.assert(
      fc.property(trickyString, (text) => {
        expect(canonicalJson(text)).toBe(JSON.stringify(text));
        expect(canonicalJson({ [text]: [text] })).toBe(JSON.stringify({ [text]: [text] }));
      }),
    );
  });

  it('is JSON.stringify for every UTF-16 code unit between two letters', () => {
    for (let unit = 0; unit < 0x10000; unit++) {
      const text = `a${String.fromCharCode(unit)}b`;
      if (canonicalJson(text) !== JSON.stringify(text)) expect.fail(`differs for U+${unit.toString(16)}`);
    }
  });
});

describe('sortKeysInPlace', () => {
  it('puts keys in the order Array.prototype.sort gives, for short and long key lists', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.oneof(trickyString, fc.constantFrom('a', 'b', 'items', 'type', '0', '10', '9')), { maxLength: 40 }), (keys) => {
        const sorted = [...keys];
        sortKeysInPlace(sorted);
        expect(sorted).toEqual([...keys].sort());
      }),
    );
  });
});
