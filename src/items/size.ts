// approxChars: the deterministic approximate size used by character budgets.
import type { MemoryItem } from './types.js';

const sizeOf = (value: unknown): number => {
  if (typeof value === 'string') return value.length;
  if (value === null || value === undefined) return 0;
  return JSON.stringify(value)?.length ?? 0;
};

/**
 * Approximate size in characters: a string counts its length, an object the length of its JSON text,
 * an array of items the sum over its items.
 * @example approxChars([userMessage('hi')]) // length of '{"type":"message","role":"user","content":"hi"}'
 */
export const approxChars = (value: MemoryItem | readonly MemoryItem[] | string | null | undefined): number => {
  if (Array.isArray(value)) {
    let total = 0;
    for (const item of value) total += sizeOf(item);
    return total;
  }
  return sizeOf(value);
};
