// How the CLI names and previews a memory item.
import { textOf, type MemoryItem } from '../items/index.js';
import { oneLine } from './output.js';

export const itemKind = (item: MemoryItem, isSummary = false): string => {
  if (isSummary) return 'summary';
  const record = item as Record<string, unknown>;
  if (item.type === 'message') return `${String(record['role'])} message`;
  if (item.type === 'function_call') return `call ${String(record['name'])}`;
  if (item.type === 'function_call_output') return 'tool result';
  return item.type;
};

export const itemPreview = (item: MemoryItem, max = 80): string => {
  const record = item as Record<string, unknown>;
  if (item.type === 'message') return oneLine(textOf(item) || JSON.stringify(record['tool_calls'] ?? ''), max);
  if (item.type === 'function_call') return oneLine(`${String(record['call_id'])} ${String(record['arguments'])}`, max);
  if (item.type === 'function_call_output') return oneLine(`${String(record['call_id'])} ${String(record['output'])}`, max);
  return oneLine(JSON.stringify(item), max);
};
