// Canonical JSON (sorted keys, no whitespace) and sha256 digests over it: hash chain and projection digests.
import { createHash } from 'node:crypto';

const write = (value: unknown, out: string[]): void => {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) {
      out.push('null');
      return;
    }
    out.push(JSON.stringify(value) ?? 'null');
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      const v = value[i];
      write(v === undefined || typeof v === 'function' ? null : v, out);
    }
    out.push(']');
    return;
  }
  const obj = value as Record<string, unknown>;
  if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') {
    write((obj as { toJSON: () => unknown }).toJSON(), out);
    return;
  }
  const keys = Object.keys(obj).sort();
  out.push('{');
  let first = true;
  for (const key of keys) {
    const v = obj[key];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    if (!first) out.push(',');
    first = false;
    out.push(JSON.stringify(key), ':');
    write(v, out);
  }
  out.push('}');
};

/** JSON text with object keys sorted and no whitespace: equal values give equal text. */
export const canonicalJson = (value: unknown): string => {
  const out: string[] = [];
  write(value, out);
  return out.join('');
};

/** sha256 hex digest of the canonical JSON of a value. */
export const digestOf = (value: unknown): string => createHash('sha256').update(canonicalJson(value)).digest('hex');
