// Faults in what append accepts: non-JSON values coerced silently, an unusable clock value, 1M-character session ids, writer state kept forever.
import { describe, expect, it } from 'vitest';
import { isInvalidEventError, type InvalidEventError, type NewSessionEvent } from '../../src/events/index.js';
import { MAX_SESSION_ID_LENGTH, isInvalidSessionIdError, openMemoryLog, type Clock } from '../../src/log/index.js';
import { writerStateCount } from '../../src/log/store.js';
import { collectAll, rejectionOf, say, says } from './support.js';

const started = (metadata: unknown): NewSessionEvent => ({ type: 'session.started', metadata }) as unknown as NewSessionEvent;

class Point {
  constructor(readonly x: number) {}
}

describe('non-JSON values in appended events', () => {
  const cases: [string, unknown, string, RegExp][] = [
    ['NaN', { n: Number.NaN }, 'metadata.n', /NaN is not a JSON number/],
    ['Infinity', { deep: { list: [1, Number.POSITIVE_INFINITY] } }, 'metadata.deep.list.1', /Infinity is not a JSON number/],
    ['-Infinity', { n: Number.NEGATIVE_INFINITY }, 'metadata.n', /-Infinity/],
    ['a Map', { m: new Map([['a', 1]]) }, 'metadata.m', /a Map is not JSON/],
    ['a Set', { s: new Set([1]) }, 'metadata.s', /a Set is not JSON/],
    ['a Date', { when: new Date(0) }, 'metadata.when', /a Date is not JSON \(write it as an ISO string\)/],
    ['a function', { f: () => 1 }, 'metadata.f', /a function is not JSON/],
    ['undefined in an array', { list: [1, undefined, 2] }, 'metadata.list.1', /undefined is not JSON/],
    ['a hole in an array', { list: [1, , 2] }, 'metadata.list.1', /array hole/], // eslint-disable-line no-sparse-arrays
    ['a symbol', { s: Symbol('x') }, 'metadata.s', /a symbol is not JSON/],
    ['a bigint', { b: 10n }, 'metadata.b', /a bigint is not JSON/],
    ['a class instance', { p: new Point(1) }, 'metadata.p', /a Point is not JSON/],
    ['a boxed string', { s: new String('x') }, 'metadata.s', /a String is not JSON/], // eslint-disable-line no-new-wrappers
    ['an object with toJSON', { t: { toJSON: () => 'x' } }, 'metadata.t', /toJSON/],
  ];
  for (const [name, metadata, path, message] of cases) {
    it(`rejects ${name} with its path (${path}) and writes nothing`, async () => {
      const log = await openMemoryLog();
      const error = await rejectionOf(log.append('s', [say('fine'), started(metadata)]));
      expect(isInvalidEventError(error)).toBe(true);
      expect((error as InvalidEventError).index).toBe(1);
      expect((error as InvalidEventError).issues).toEqual([{ path, message: expect.stringMatching(message) }]);
      expect(await log.head('s')).toBe(0);
      await log.close();
    });
  }

  it('rejects a cycle with its path, and a value nested past 1000 levels', async () => {
    const log = await openMemoryLog();
    const cyclic: Record<string, unknown> = { a: { b: {} } };
    (cyclic['a'] as { b: Record<string, unknown> }).b['back'] = cyclic;
    const cycle = await rejectionOf(log.append('s', [started(cyclic)]));
    expect((cycle as InvalidEventError).issues).toEqual([{ path: 'metadata.a.b.back', message: 'a circular reference is not JSON' }]);
    let deep: unknown = 'bottom';
    for (let i = 0; i < 1100; i++) deep = { d: deep };
    const tooDeep = await rejectionOf(log.append('s', [started(deep)]));
    expect((tooDeep as InvalidEventError).issues[0]?.message).toMatch(/nested deeper than 1000 levels/);
    await log.close();
  });

  it('keeps what is JSON: an undefined property is left out, -0 is 0, a "__proto__" key pollutes nothing, 200 levels of nesting are fine', async () => {
    const log = await openMemoryLog();
    let deep: unknown = 'bottom';
    for (let i = 0; i < 200; i++) deep = { d: deep };
    const metadata = JSON.parse('{"__proto__": {"polluted": true}, "z": -0}') as Record<string, unknown>;
    metadata['gone'] = undefined;
    metadata['deep'] = deep;
    const [stored] = await log.append('s', [started(metadata)]);
    const read = await collectAll(log.read('s'));
    expect(read).toEqual([stored]);
    const kept = (read[0] as unknown as { metadata: Record<string, unknown> }).metadata;
    expect(Object.keys(kept)).toContain('deep');
    expect(Object.keys(kept)).not.toContain('gone');
    expect(Object.is(kept['z'], 0)).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect((await log.verify('s')).valid).toBe(true);
    await log.close();
  });
});

describe('an empty or invalid clock value', () => {
  const readings: [string, unknown][] = [
    ['an empty string', ''],
    ['an invalid Date', new Date(Number.NaN)],
    ['NaN', Number.NaN],
    ['an object', { at: 'now' }],
    ['undefined', undefined],
  ];
  for (const [name, reading] of readings) {
    it(`is rejected before writing: ${name}`, async () => {
      let bad = true;
      const log = await openMemoryLog({ clock: (() => (bad ? reading : '2026-01-01T00:00:00.000Z')) as Clock });
      const error = await rejectionOf(log.append('s', says('x', 2)));
      expect(isInvalidEventError(error)).toBe(true);
      expect((error as InvalidEventError).issues[0]?.path).toBe('at');
      expect((error as Error).message).toMatch(/for session "s": at: the clock returned/);
      bad = false;
      await log.append('s', says('y', 1), { expectedSeq: 0 });
      expect((await collectAll(log.read('s'))).map((e) => e.at)).toEqual(['2026-01-01T00:00:00.000Z']);
      await log.close();
    });
  }

  it('a clock that throws rejects that append only', async () => {
    let calls = 0;
    const log = await openMemoryLog({
      clock: () => {
        calls += 1;
        if (calls === 2) throw new Error('clock broke');
        return new Date(Date.UTC(2026, 0, 1));
      },
    });
    const results = await Promise.allSettled([log.append('s', says('a', 1)), log.append('s', says('b', 1)), log.append('s', says('c', 1))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(((results[1] as PromiseRejectedResult).reason as Error).message).toMatch(/the clock threw: clock broke/);
    expect(await log.verify('s')).toEqual({ valid: true, eventCount: 2, firstBrokenSeq: null });
    await log.close();
  });
});

describe('session ids', () => {
  it(`are capped at ${MAX_SESSION_ID_LENGTH} UTF-16 code units with a clear error that does not repeat the id`, async () => {
    const log = await openMemoryLog();
    const longest = 'é'.repeat(MAX_SESSION_ID_LENGTH);
    await log.append(longest, says('ok', 1));
    expect(await log.head(longest)).toBe(1);
    const huge = 'x'.repeat(1_000_000);
    for (const attempt of [() => log.append(huge, says('no', 50)), () => log.head(`${longest}!`), () => collectAll(log.read(huge)), () => log.verify(huge), () => log.anchor(huge)]) {
      const error = await rejectionOf(attempt);
      expect(isInvalidSessionIdError(error)).toBe(true);
      expect((error as Error).message).toMatch(/at most 512 UTF-16 code units/);
      expect((error as Error).message.length).toBeLessThan(300);
    }
    expect(await collectAll(log.sessions())).toEqual([longest]);
    await log.close();
  });
});

describe('per-session writer state', () => {
  it('is released when idle: 2,000 sessions leave at most 256 writer states, and appends to a released one continue its chain', async () => {
    const log = await openMemoryLog();
    for (let i = 0; i < 2000; i++) await log.append(`session-${i}`, says('x', 1));
    expect(writerStateCount(log)).toBeLessThanOrEqual(256);
    expect(writerStateCount(log)).toBeGreaterThan(0);
    const next = await log.append('session-0', says('again', 1), { expectedSeq: 1 });
    expect(next[0]?.seq).toBe(2);
    expect((await log.verify('session-0')).valid).toBe(true);
    await log.close();
  });
});

describe('an event whose getter throws while it is copied', () => {
  it('is an InvalidEventError, and nothing is written', async () => {
    const log = await openMemoryLog();
    const metadata = {
      get secret(): string {
        throw new Error('no access');
      },
    };
    const error = await rejectionOf(log.append('s', [say('fine'), started(metadata)]));
    expect(isInvalidEventError(error)).toBe(true);
    expect((error as InvalidEventError).index).toBe(1);
    expect((error as Error).message).toMatch(/reading the value threw: no access/);
    expect(await log.head('s')).toBe(0);
    await log.close();
  });
});
