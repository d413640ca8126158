// The texts a provider is sent for items: what a remote tokenizer must count before a projection.
import type { MemoryItem } from '../../items/index.js';
import { itemTokenCount } from './items.js';

/**
 * The distinct non-empty texts of these items that a tokenizer is asked to count (message text, call names
 * and arguments, outputs, reasoning), exactly as `itemTokenCount` splits them.
 * @example providerTextsOf([userMessage('hi'), functionCall('c', 'ls', {})]) // ['hi', 'ls', '{}']
 */
export const providerTextsOf = (items: readonly MemoryItem[]): string[] => {
  const texts = new Set<string>();
  // A fresh collector each call: itemTokenCount memoizes per tokenizer object, so every item is visited.
  const collector = { name: 'collect', count: (text: string): number => (texts.add(text), 0) };
  for (const item of items) itemTokenCount(item, collector);
  return [...texts];
};
