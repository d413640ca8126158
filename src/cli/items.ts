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

/** `[erased at AT by BY: REASON]`: how the CLI shows an item whose content `log.erase` removed. */
export const erasureNote = (mark: { readonly at: string; readonly reason: string; readonly by?: string | undefined }): string =>
  `[erased at ${mark.at}${mark.by !== undefined ? ` by ${mark.by}` : ''}: ${mark.reason}]`;

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
      const mark = event.erased;
      if (mark === undefined) continue;
      // an event scrubbed of copies names the items it scrubbed; the others kept their content
      for (const id of of) if (mark.copy !== true || (mark.items ?? []).includes(id)) notes.set(id, erasureNote(mark));
    }
  }
  return notes;
};
