// Helpers for the hardening tests (kept apart from the contract suite, which moves to src/testing).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewSessionEvent } from '../../src/events/index.js';
import type { Clock } from '../../src/log/index.js';

export const collectAll = async <T>(iterable: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const value of iterable) out.push(value);
  return out;
};

/** The rejection of a promise (fails when it resolves). */
export const rejectionOf = async (promise: Promise<unknown> | (() => Promise<unknown>)): Promise<unknown> => {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but it resolved');
};

export const say = (text: string): NewSessionEvent => ({ type: 'user.input', items: [{ type: 'message', role: 'user', content: text }] });

/** `n` user inputs tagged `${tag}.i`. */
export const says = (tag: string, n: number): NewSessionEvent[] => Array.from({ length: n }, (_, i) => say(`${tag}.${i}`));

/** A clock one second further on each call. */
export const stepClock = (): Clock => {
  let n = 0;
  return () => new Date(Date.UTC(2026, 0, 1, 0, 0, n++));
};

/** A temp directory for one test, and its removal. */
export const tempDir = async (tag: string): Promise<{ dir: string; remove: () => Promise<void> }> => {
  const dir = await mkdtemp(join(tmpdir(), `context-ledger-${tag}-`));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
};

/** A seeded PRNG (mulberry32) so a failing run can be replayed from its printed seed. */
export const seededRandom = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};
