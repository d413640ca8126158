// Sealing (chain version 2) builds the envelope's canonical JSON from the members it already wrote for the stored
// text: the hash is the one the read side recomputes from the stored event, for any payload and envelope.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GENESIS_HASH, chainHash, sealEventV2 } from '../src/log/hash-chain.js';

const key = fc.oneof(fc.constantFrom('items', 'output', 'zeta', 'a', 'callId', 'Z', 'érased', 'types'), fc.string({ maxLength: 6 }));
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(key, tie('value'), { maxKeys: 4 })),
})).value;

const unsealed = fc.record(
  {
    sessionId: fc.string({ minLength: 1, maxLength: 8 }),
    seq: fc.integer({ min: 1, max: 1_000_000 }),
    at: fc.constant('2025-01-01T00:00:00.000Z'),
    v: fc.integer({ min: 1, max: 3 }),
    type: fc.constantFrom('user.input', 'tool.result', 'x.custom'),
    redactions: fc.array(fc.record({ path: fc.string({ maxLength: 5 }), rule: fc.string({ maxLength: 5 }) }), { maxLength: 2 }),
    payload: fc.dictionary(key, json, { maxKeys: 5 }),
  },
  { requiredKeys: ['sessionId', 'seq', 'at', 'v', 'type', 'payload'] },
);

describe('sealEventV2', () => {
  it('gives the hash chainHash recomputes from the sealed event, with and without a chain key', () => {
    fc.assert(
      fc.property(unsealed, fc.option(fc.string({ minLength: 1, maxLength: 8 }), { nil: undefined }), (input, chainKey) => {
        const { payload, ...envelope } = input;
        const event: Record<string, unknown> = { ...payload, ...envelope, prevHash: GENESIS_HASH };
        const sealed = sealEventV2(GENESIS_HASH, event, chainKey);
        const stored = JSON.parse(sealed.text) as Record<string, unknown>;
        expect(stored['hash']).toBe(sealed.hash);
        const { hash: _hash, ...withoutHash } = stored;
        expect(chainHash(GENESIS_HASH, withoutHash, chainKey)).toBe(sealed.hash);
      }),
    );
  });
});
