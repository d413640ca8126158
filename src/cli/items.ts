// How the CLI names and previews a memory item.
import { textOf, type MemoryItem } from '../items/index.js';
import { oneLine } from './output.js';
import type { SessionEventLog } from '../log/index.js';

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

/** `[erased at AT by BY: REASON]` for each of these item ids whose event `log.erase` removed the content of. */
export const erasureNotes = async (log: SessionEventLog, sessionId: string, ids: readonly string[]): Promise<Map<string, string>> => {
  const notes = new Map<string, string>();
  const seqs = new Map<number, string[]>();
  for (const id of ids) {
    const seq = Number(id.slice(0, id.indexOf(':')));
    if (Number.isSafeInteger(seq) && seq > 0) seqs.set(seq, [...(seqs.get(seq) ?? []), id]);
  }
  for (const [seq, of] of seqs) {
    for await (const event of log.read(sessionId, { fromSeq: seq, toSeq: seq })) {
      if (event.erased === undefined) continue;
      const note = `[erased at ${event.erased.at}${event.erased.by !== undefined ? ` by ${event.erased.by}` : ''}: ${event.erased.reason}]`;
      for (const id of of) notes.set(id, note);
    }
  }
  return notes;
};
