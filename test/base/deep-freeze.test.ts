// deepFreeze: the one deep freeze of JSON values (checkpoints, law checks, contract suites).
import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../src/base/index.js';
import { deepFreeze as fromTesting } from '../../src/testing/index.js';

describe('deepFreeze', () => {
  it('freezes objects and arrays at every depth, in place, and returns the value', () => {
    const value = { a: [{ b: { c: [1, { d: 'x' }] } }], e: null };
    const frozen = deepFreeze(value);
    expect(frozen).toBe(value);
    expect([value, value.a, value.a[0], value.a[0]!.b, value.a[0]!.b.c, value.a[0]!.b.c[1]].every((v) => Object.isFrozen(v))).toBe(true);
  });

  it('leaves primitives as they are', () => {
    expect(deepFreeze(3)).toBe(3);
    expect(deepFreeze('s')).toBe('s');
    expect(deepFreeze(null)).toBe(null);
    expect(deepFreeze(undefined)).toBe(undefined);
  });

  it('terminates on a cycle (each object is frozen before its children are visited)', () => {
    const a: Record<string, unknown> = { name: 'a' };
    const b: Record<string, unknown> = { name: 'b', a };
    a['b'] = b;
    deepFreeze(a);
    expect(Object.isFrozen(a) && Object.isFrozen(b)).toBe(true);
  });

  it('is the function context-ledger/testing exports', () => {
    expect(fromTesting).toBe(deepFreeze);
  });
});
