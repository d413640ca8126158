// Canonical JSON (sorted keys, no whitespace) and sha256 digests over it: hash chain and projection digests.
import { createHash } from 'node:crypto';

// Object keys repeat (every event has the same few), so their quoted form is cached; bounded so that
// arbitrary user keys cannot grow it without limit.
const quotedKeys = new Map<string, string>();
const MAX_QUOTED_KEYS = 4096;

const quoteKey = (key: string): string => {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < MAX_QUOTED_KEYS) quotedKeys.set(key, quoted);
  }
  return quoted;
};

const isSkipped = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

// What JSON.stringify escapes in a string: '"', '\\', control characters and lone surrogates (any
// surrogate here: those strings take JSON.stringify itself). Any other string it writes as it is, in quotes.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify(text)`, without its per-call cost for the common string that needs no escape. */
const quoteString = (text: string): string => (NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`);

/**
 * Sorts a fresh `Object.keys` array in place, in the order `Array.prototype.sort` gives (UTF-16 code
 * units). Objects have few keys, often in order or nearly: insertion sort allocates nothing and, for
 * them, takes a fraction of `sort`'s time.
 */
export const sortKeysInPlace = (keys: string[]): void => {
  if (keys.length > 32) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    if ((keys[j] as string) <= key) continue;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j -= 1;
    }
    keys[j + 1] = key;
  }
};

// Builds the text by string concatenation; primitives as JSON.stringify writes them (non-finite
// numbers as null), and keys sorted in place.
const write = (value: unknown): string => {
  switch (typeof value) {
    case 'string':
      return quoteString(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      return JSON.stringify(value) ?? 'null'; // undefined, function, symbol: null; bigint throws as JSON.stringify does
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      const v: unknown = value[i];
      out += v === undefined || typeof v === 'function' ? 'null' : write(v);
    }
    return out + ']';
  }
  const obj = value as Record<string, unknown>;
  if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') return write((obj as { toJSON: () => unknown }).toJSON());
  const keys = Object.keys(obj);
  sortKeysInPlace(keys);
  let out = '{';
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const v = obj[key];
    if (isSkipped(v)) continue;
    out += (first ? '' : ',') + quoteKey(key) + ':' + write(v);
    first = false;
  }
  return out + '}';
};

/** JSON text with object keys sorted and no whitespace: equal values give equal text. */
export const canonicalJson = (value: unknown): string => write(value);

/**
 * `prefix + canonicalJson(value)`. The hash chain hashes the previous hash and an event's canonical
 * JSON as one string: built as one, it is flattened once (by the hash), and the canonical JSON is then
 * a slice of it rather than a second copy.
 */
export const prefixedCanonicalJson = (prefix: string, value: unknown): string => prefix + write(value);

/** Text is hashed in pieces of about this many UTF-16 units. */
const DIGEST_CHUNK = 1 << 16;
let largestPiece = 0;

/** The longest text digestOf has given its hash at once in this process: a work count for tests. */
export const largestDigestPiece = (): number => largestPiece;
/** The first levels of objects and arrays, and arrays at least this long at any level, are hashed piece by piece. */
const STREAMED_ARRAY = 64;
const STREAMED_DEPTH = 4;

/**
 * sha256 hex digest of the canonical JSON of a value. The text is hashed as it is written: long arrays element by
 * element and the first levels of objects member by member, in pieces of about 64K, so a large value (a checkpoint's
 * memory) is never built as one string; the digest is that of `canonicalJson(value)`, byte for byte.
 */
export const digestOf = (value: unknown): string => {
  const hash = createHash('sha256');
  let pending = '';
  const put = (text: string): void => {
    pending += text;
    if (pending.length >= DIGEST_CHUNK) {
      if (pending.length > largestPiece) largestPiece = pending.length;
      hash.update(pending);
      pending = '';
    }
  };
  // The rules of write, with what it would return for a long array or a shallow object put piece by piece.
  const emit = (v: unknown, depth: number): void => {
    if (v === null || typeof v !== 'object') {
      put(write(v));
      return;
    }
    if (Array.isArray(v)) {
      if (v.length < STREAMED_ARRAY && depth >= STREAMED_DEPTH) {
        put(write(v));
        return;
      }
      put('[');
      for (let i = 0; i < v.length; i++) {
        if (i > 0) put(',');
        const element: unknown = v[i];
        if (element === undefined || typeof element === 'function') put('null');
        else emit(element, depth + 1);
      }
      put(']');
      return;
    }
    const obj = v as Record<string, unknown>;
    if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') {
      emit((obj as { toJSON: () => unknown }).toJSON(), depth);
      return;
    }
    if (depth >= STREAMED_DEPTH) {
      put(write(obj));
      return;
    }
    const keys = Object.keys(obj);
    sortKeysInPlace(keys);
    put('{');
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const member = obj[key];
      if (isSkipped(member)) continue;
      put((first ? '' : ',') + quoteKey(key) + ':');
      emit(member, depth + 1);
      first = false;
    }
    put('}');
  };
  emit(value, 0);
  if (pending.length > largestPiece) largestPiece = pending.length;
  hash.update(pending);
  return hash.digest('hex');
};

/** `"key":value` as canonicalJson writes one object member (the hash chain builds objects from members it also reuses). */
export const canonicalMember = (key: string, value: unknown): string => quoteKey(key) + ':' + write(value);

/** Whether canonicalJson leaves an object member with this value out (undefined, a function, a symbol). */
export const isSkippedMember = (value: unknown): boolean => isSkipped(value);
