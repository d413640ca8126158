// The text of a memory item as recall shows and indexes it, and the items an event brought into memory.
import { changesMemory, type MemoryState } from '../../memory/index.js';
import type { SessionEvent } from '../../events/index.js';
import { systemMessage, textOf, toolCallArguments, toolCallName, type MemoryItem } from '../../items/index.js';

/** Plain text of an item: a message's text and calls, a call's name and arguments, a result's output, a reasoning's text. */
export const recallTextOf = (item: MemoryItem): string => {
  const record = item as Record<string, unknown>;
  if (item.type === 'message') {
    const calls = Array.isArray(record['tool_calls'])
      ? (record['tool_calls'] as Parameters<typeof toolCallName>[0][]).map((c) => `call ${toolCallName(c) ?? '?'}(${toolCallArguments(c)}) [${c.id}]`)
      : [];
    return [textOf(item), ...calls].filter((t) => t !== '').join('\n');
  }
  if (item.type === 'function_call') return `${String(record['name'])}(${String(record['arguments'] ?? '')})`;
  if (item.type === 'function_call_output') return typeof record['output'] === 'string' ? record['output'] : JSON.stringify(record['output'] ?? '');
  if (item.type === 'reasoning') {
    for (const key of ['summary', 'text', 'content']) {
      const value = record[key];
      if (typeof value === 'string') return value;
      if (value !== undefined) return JSON.stringify(value);
    }
  }
  return JSON.stringify(item);
};

/** How recall names an item's kind: `user message`, `function_call read_file`, `function_call_output`, `summary`… */
export const recallKindOf = (item: MemoryItem, isSummary = false): string => {
  if (isSummary) return 'summary';
  const record = item as Record<string, unknown>;
  if (item.type === 'message') return `${String(record['role'])} message`;
  if (item.type === 'function_call') return `function_call ${String(record['name'])}`;
  return item.type;
};

/** One item an event brought into memory, with its id (`"<seq>:<index>"` or `"<seq>:summary"`). */
export interface EnteredItem {
  readonly id: string;
  readonly item: MemoryItem;
  readonly summary: boolean;
  /** The tool call a result answers (tool.result). */
  readonly callId?: string;
  /** The tool's name (tool.result). */
  readonly tool?: string;
}

/**
 * The items an event brings into memory, as the fold gives them ids: appended items, a restore's items, a
 * compaction's inline items and summary, a new summary. `session.rewound` brings back items that entered before.
 */
export const itemsEnteredBy = (event: SessionEvent): EnteredItem[] => {
  if (!changesMemory(event)) return [];
  const at = (i: number): string => `${event.seq}:${i}`;
  switch (event.type) {
    case 'user.input':
    case 'model.output':
    case 'model.responded':
      return event.items.map((item, i) => ({ id: at(i), item, summary: false }));
    case 'tool.result':
      return [
        {
          id: at(0),
          item: { type: 'function_call_output', call_id: event.callId, output: event.output },
          summary: false,
          callId: event.callId,
          ...(event.name !== undefined ? { tool: event.name } : {}),
        },
      ];
    case 'memory.restored': {
      const items: EnteredItem[] = event.items.map((item, i) => ({ id: at(i), item, summary: false }));
      if (event.summary) items.push({ id: `${event.seq}:summary`, item: systemMessage(event.summary), summary: true });
      return items;
    }
    case 'memory.compacted': {
      const items: EnteredItem[] = [];
      event.layout.forEach((slot, i) => {
        if ('item' in slot) items.push({ id: at(i), item: slot.item, summary: false });
      });
      if (event.summary) items.push({ id: `${event.seq}:summary`, item: systemMessage(event.summary), summary: true });
      return items;
    }
    case 'memory.edited':
      return (event.layout ?? []).flatMap((slot, i): EnteredItem[] => ('item' in slot ? [{ id: at(i), item: slot.item, summary: false }] : []));
    case 'memory.summary-set':
      return event.summary ? [{ id: `${event.seq}:summary`, item: systemMessage(event.summary), summary: true }] : [];
    default:
      return [];
  }
};

/** The seq part of an item id. */
export const seqOfId = (id: string): number => Number(id.slice(0, id.indexOf(':')));

/** Whether an id is in memory now (an entry, the summary or the working-memory item). */
export const inMemoryNow = (state: MemoryState, id: string): boolean =>
  id === state.summaryId || id === state.blocksId || state.entries.some((e) => e.id === id);
