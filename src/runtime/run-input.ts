// The input of `run`: a string, an item or a list of items, validated as a `user.input` event before anything is written.
import { issuesOf, newEventSchemaFor } from '../events/index.js';
import { itemsOfInput, type MemoryItem } from '../items/index.js';

/**
 * The items a `run` input brings in, or what is wrong with it (paths name the input, e.g. `input.0.role`).
 * @example runInputItems(42) // { problem: 'expected a string, an item or a list of items, got number' }
 */
export const runInputItems = (input: unknown): { items: MemoryItem[] } | { problem: string } => {
  if (typeof input !== 'string' && (input === null || typeof input !== 'object')) {
    return { problem: `expected a string, an item or a list of items, got ${input === null ? 'null' : typeof input}` };
  }
  const items = itemsOfInput(input as string | MemoryItem | readonly MemoryItem[]);
  const parsed = newEventSchemaFor('user.input').safeParse({ type: 'user.input', items });
  if (parsed.success) return { items };
  return { problem: issuesOf(parsed.error).map((i) => `${i.path === '' ? '(root)' : i.path.replace(/^items\./, 'input.')}: ${i.message}`).join('; ') };
};
