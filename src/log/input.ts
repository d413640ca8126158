// What an append is given, checked before anything is sealed: the session id, the clock's reading, each event as plain JSON.
import * as E from 'fp-ts/lib/Either.js';
import { InvalidEventError, validateNewEvent, type NewSessionEvent } from '../events/index.js';
import { sortKeysInPlace } from '../base/canonical.js';
import { InvalidSessionIdError, MAX_SESSION_ID_LENGTH } from './errors.js';

/** The `at` stamp of a clock reading; an empty string, an invalid date or anything else is an InvalidEventError. */
export const stampOf = (sessionId: string, read: () => unknown): string => {
  let value: unknown;
  let problem: string;
  try {
    value = read();
    if (typeof value === 'string') {
      if (value.length > 0) return value;
      problem = 'the clock returned an empty string';
    } else if (value instanceof Date || typeof value === 'number') {
      const date = value instanceof Date ? value : new Date(value);
      if (!Number.isNaN(date.getTime())) return date.toISOString();
      problem = `the clock returned an invalid date (${String(value)})`;
    } else {
      problem = `the clock returned ${typeof value}; expected a Date, an ISO string or epoch milliseconds`;
    }
  } catch (cause) {
    problem = `the clock threw: ${cause instanceof Error ? cause.message : 'a non-Error value'}`;
  }
  throw new InvalidEventError({ sessionId, index: 0, issues: [{ path: 'at', message: problem }] });
};

export const assertSessionId = (sessionId: unknown): string => {
  if (typeof sessionId !== 'string' || sessionId.length === 0 || sessionId.length > MAX_SESSION_ID_LENGTH) {
    throw new InvalidSessionIdError(sessionId);
  }
  return sessionId;
};

const NOT_PLAIN: unique symbol = Symbol('not plain JSON');
const MAX_PLAIN_DEPTH = 64;

/**
 * `JSON.parse(JSON.stringify(value))` made directly for a value that is plain JSON already (plain
 * objects and arrays, strings, finite numbers, booleans, null), as events nearly always are: no text
 * is built and parsed, and the copy is the same (same keys in the same order). Anything
 * the round trip would change or reject (undefined, functions, symbols, bigints, non-finite numbers,
 * -0, holes, toJSON, class instances, boxed values, a '__proto__' key, deep nesting or a cycle)
 * gives NOT_PLAIN, and the caller takes the round trip itself.
 */
const copyPlainJson = (value: unknown, depth: number): unknown => {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) ? value : NOT_PLAIN;
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (value === null) return null;
  if (depth > MAX_PLAIN_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') return NOT_PLAIN;
  const proto: unknown = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (proto !== Array.prototype) return NOT_PLAIN;
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return NOT_PLAIN;
      const v = copyPlainJson(value[i], depth + 1);
      if (v === NOT_PLAIN) return NOT_PLAIN;
      out.push(v);
    }
    return out;
  }
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const keys = Object.keys(obj);
  // Keys in sorted order, as `read` gives them back (the stored text is canonical JSON), so what `append`
  // returns and what `read` returns are deep-equal, key order included (law 10).
  sortKeysInPlace(keys);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (key === '__proto__') return NOT_PLAIN;
    const v = copyPlainJson(obj[key], depth + 1);
    if (v === NOT_PLAIN) return NOT_PLAIN;
    out[key] = v;
  }
  return out;
};

const MAX_JSON_DEPTH = 1000;

/** Why `value` is not JSON, in words, for a value the fast copy refused. */
const notJsonReason = (value: unknown): string => {
  switch (typeof value) {
    case 'number':
      return `${String(value)} is not a JSON number`;
    case 'undefined':
      return 'undefined is not JSON (in an array it would turn into null)';
    case 'function':
      return 'a function is not JSON';
    case 'symbol':
      return 'a symbol is not JSON';
    case 'bigint':
      return 'a bigint is not JSON (write it as a string)';
    default:
      break;
  }
  if (value instanceof Date) return 'a Date is not JSON (write it as an ISO string)';
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return `${typeof name === 'string' && name !== '' ? `a ${name}` : 'an object that is not a plain object'} is not JSON`;
};

class NotJson extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const joinPath = (path: string, key: string | number): string => (path === '' ? String(key) : `${path}.${key}`);

/**
 * The slow path behind copyPlainJson: the same copy for values that are JSON but that the fast path
 * leaves to it (-0, a property whose value is undefined, which JSON leaves out, a '__proto__' key, deep
 * nesting), and a NotJson error with the path for anything else: non-finite numbers, undefined in an
 * array, functions, symbols, bigints, holes, Dates and other class instances, boxed values, cycles.
 */
const normalizeJson = (value: unknown, path: string, ancestors: object[]): unknown => {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new NotJson(path, notJsonReason(value));
      return Object.is(value, -0) ? 0 : value;
    case 'object':
      break;
    default:
      throw new NotJson(path, notJsonReason(value));
  }
  if (value === null) return null;
  if (ancestors.includes(value)) throw new NotJson(path, 'a circular reference is not JSON');
  if (ancestors.length >= MAX_JSON_DEPTH) throw new NotJson(path, `nested deeper than ${MAX_JSON_DEPTH} levels`);
  const proto: unknown = Object.getPrototypeOf(value);
  ancestors.push(value);
  try {
    if (Array.isArray(value) && proto === Array.prototype) {
      const out: unknown[] = [];
      for (let i = 0; i < value.length; i++) {
        if (!(i in value)) throw new NotJson(joinPath(path, i), 'an array hole is not JSON');
        out.push(normalizeJson(value[i], joinPath(path, i), ancestors));
      }
      return out;
    }
    if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      throw new NotJson(path, typeof (value as { toJSON?: unknown }).toJSON === 'function' && !(value instanceof Date) ? 'an object with toJSON is not plain JSON' : notJsonReason(value));
    }
    const out: Record<string, unknown> = {};
    // sorted, as copyPlainJson gives them and `read` gives them back (law 10)
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v === undefined) continue; // JSON leaves the property out
      const copy = normalizeJson(v, joinPath(path, key), ancestors);
      if (key === '__proto__') Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
      else out[key] = copy;
    }
    return out;
  } finally {
    ancestors.pop();
  }
};

/** Validates and copies a batch as JSON; throws InvalidEventError (with index and path) on the first bad one. */
export const validateBatch = (sessionId: string, events: readonly NewSessionEvent[]): Record<string, unknown>[] => {
  if (!Array.isArray(events)) {
    throw new InvalidEventError({ sessionId, index: 0, issues: [{ path: '', message: 'expected an array of events' }] });
  }
  return events.map((event, index) => {
    let plain: unknown;
    try {
      plain = copyPlainJson(event, 0);
      if (plain === NOT_PLAIN) plain = normalizeJson(event, '', []);
    } catch (error) {
      // a getter or a proxy that throws while the value is copied: the event cannot be read as JSON
      const issue =
        error instanceof NotJson
          ? { path: error.path, message: error.reason }
          : { path: '', message: `reading the value threw: ${error instanceof Error ? error.message : 'a non-Error value'}` };
      let eventType: string | undefined;
      try {
        const type = (event as { type?: unknown } | null)?.type;
        eventType = typeof type === 'string' ? type : undefined;
      } catch {
        eventType = undefined;
      }
      throw new InvalidEventError({ sessionId, index, eventType, issues: [issue] });
    }
    const result = validateNewEvent(plain, index, sessionId);
    if (E.isLeft(result)) throw result.left;
    return result.right as Record<string, unknown>;
  });
};
