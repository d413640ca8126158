// recallTool: the model reads back, from the log, items it no longer sees as they were (by id or call id, or by a search).
import { z } from 'zod';
import type { SessionEvent } from '../../events/index.js';
import type { SessionEventLog } from '../../log/index.js';

type ErasedMark = NonNullable<SessionEvent['erased']>;
import { defineTool, type Tool } from '../tools.js';
import { ToolFailedError } from '../errors.js';
import { InvalidOptionsError } from '../../base/errors.js';
import { memoryAccessOf } from './access.js';
import { inMemoryNow, itemsEnteredBy, recallTextOf, type EnteredItem } from './item-text.js';
import { recallIndexFor } from './recall-index.js';

export interface RecallToolOptions {
  /** The tool's name (default `recall`). */
  readonly name?: string;
  /** Characters of an item's text per call; longer texts come in pages read on with `offset` (default 4,000). */
  readonly maxChars?: number;
  /** Hits a query returns when the call gives no `limit` (default 5; a call may ask for at most 50). */
  readonly defaultLimit?: number;
}

/** How every recall tool's description starts: a re-run knows the tool by it (its spec is all the recording keeps). */
export const RECALL_DESCRIPTION_START = "Read back from this session's log what you no longer see as it was";

const ITEM_ID = /^(\d+):(\d+|summary)$/;
const MAX_LIMIT = 50;

const parameters = z.object({
  id: z.string().min(1).optional().describe('An item id ("12:0", as placeholders and summaries name them) or a tool call id: returns that item as it first entered memory.'),
  query: z.string().min(1).optional().describe('Words to search for among items you no longer see as they were (dropped, cleared, trimmed or compacted away).'),
  limit: z.number().int().optional().describe(`Most hits a query returns (1 to ${MAX_LIMIT}).`),
  offset: z.number().int().optional().describe('With id: the character to read on from, for a long text.'),
});

/** The item with id `id` as the event at its seq brought it into memory, and the erasure that removed its content, if one did. */
const readItem = async (log: SessionEventLog, sessionId: string, id: string): Promise<(EnteredItem & { readonly erased?: ErasedMark }) | undefined> => {
  const match = ITEM_ID.exec(id);
  if (!match) return undefined;
  const seq = Number(match[1]);
  if (seq < 1) return undefined;
  for await (const event of log.read(sessionId, { fromSeq: seq, toSeq: seq })) {
    const entered = itemsEnteredBy(event).find((e) => e.id === id);
    const mark = event.erased;
    // an event scrubbed of copies names the items it scrubbed
    const erased = mark !== undefined && (mark.copy !== true || (mark.items ?? []).includes(id)) ? mark : undefined;
    return entered && erased ? { ...entered, erased } : entered;
  }
  return undefined;
};

/** What recall says of an item whose content was erased: when, by whom, why, and the event that recorded it. */
const erasureNotice = (mark: ErasedMark): string =>
  `Its content was erased at ${mark.at}${mark.by !== undefined ? ` by ${mark.by}` : ''}: ${mark.reason} (event.erased at seq ${mark.seq}); only a placeholder is left.`;

/** A snippet of `text` around the first of `terms` it contains (case-insensitive), about `width` characters. */
const snippetOf = (text: string, terms: readonly string[], width = 160): string => {
  const flat = text.replace(/\s+/g, ' ');
  const lower = flat.toLowerCase();
  let at = -1;
  let term = '';
  for (const t of terms) {
    const i = lower.indexOf(t.toLowerCase());
    if (i >= 0 && (at < 0 || i < at)) {
      at = i;
      term = t;
    }
  }
  if (at < 0) return flat.length > width ? `${flat.slice(0, width)}…` : flat;
  const start = Math.max(0, at - Math.floor((width - term.length) / 2));
  const end = Math.min(flat.length, start + width);
  return `${start > 0 ? '…' : ''}${flat.slice(start, end)}${end < flat.length ? '…' : ''}`;
};

/**
 * A tool that lets the model read back what it no longer sees: `{ id }` (an item id such as `"12:0"`, or a tool call
 * id: that call's original result) returns the item as it first entered memory, dropped, cleared, trimmed or
 * compacted away, paged by `maxChars` (`offset` reads on); `{ query }` searches the text of the items it is not
 * seeing as they were and returns the best `limit` hits (id, kind, step and a snippet). Each call records
 * `memory.recalled`; its answer is an ordinary tool result. Bad input (an unknown id, both or neither of id and query,
 * a negative offset) is an error result saying what to send instead.
 * @example Agents.react({ modelClient, model, tools: [recallTool()], contextBudget: { maxRecentToolResults: 3 } })
 */
export const recallTool = (options: RecallToolOptions = {}): Tool<typeof parameters> => {
  const name = options.name ?? 'recall';
  const maxChars = options.maxChars ?? 4000;
  const defaultLimit = options.defaultLimit ?? 5;
  if (!Number.isInteger(maxChars) || maxChars < 1) throw new InvalidOptionsError('recallTool', [{ path: 'maxChars', message: `must be a positive integer, got ${String(maxChars)}` }]);
  if (!Number.isInteger(defaultLimit) || defaultLimit < 1 || defaultLimit > MAX_LIMIT) throw new InvalidOptionsError('recallTool', [{ path: 'defaultLimit', message: `must be an integer from 1 to ${MAX_LIMIT}, got ${String(defaultLimit)}` }]);
  return defineTool({
    name,
    description:
      `${RECALL_DESCRIPTION_START}: a placeholder such as "[tool result cleared: read(call-3)]" names a call whose ` +
      `result you can read again with ${name}({ "id": "call-3" }); an item id ("12:0") from a summary or an earlier answer ` +
      `works the same. ${name}({ "query": "words" }) searches the items dropped, cleared, trimmed or compacted out of your view. ` +
      `Long texts come in pages of ${maxChars} characters: pass the offset the answer gives to read on.`,
    parameters,
    async execute(args, context) {
      const access = memoryAccessOf(context, name);
      const { session } = access;
      const hasId = args.id !== undefined;
      const hasQuery = args.query !== undefined;
      if (hasId === hasQuery) throw new ToolFailedError(name, `${name} takes exactly one of "id" or "query", got ${hasId ? 'both' : 'neither'}`);
      const index = recallIndexFor(session.log, session.id);
      await index.catchUp();
      const state = session.memory.state();
      if (hasId) {
        const offset = args.offset ?? 0;
        if (offset < 0) throw new ToolFailedError(name, `offset must be 0 or more, got ${offset}`);
        if (args.limit !== undefined) throw new ToolFailedError(name, '"limit" goes with "query", not with "id"');
        const asked = args.id!;
        const id = ITEM_ID.test(asked) ? asked : index.resultOfCall(asked);
        const entered = id !== undefined ? await readItem(session.log, session.id, id) : undefined;
        if (!entered || !id) {
          const what = ITEM_ID.test(asked) ? `no item ${JSON.stringify(asked)} ever entered this session's memory` : `no tool call ${JSON.stringify(asked)} has a result in this session`;
          throw new ToolFailedError(name, `${what}; pass an item id ("<seq>:<index>") or a call id from a placeholder, or search with ${name}({ "query": "..." })`);
        }
        const text = recallTextOf(entered.item);
        if (offset > 0 && offset >= text.length) throw new ToolFailedError(name, `offset ${offset} is past the end of item ${id} (${text.length} characters)`);
        const page = text.slice(offset, offset + maxChars);
        const end = offset + page.length;
        const described = index.describe(id);
        const where = inMemoryNow(state, id) ? 'in memory now' : 'no longer in memory';
        const head = `Item ${id}${asked !== id ? ` (the result of call ${asked})` : ''}: ${described?.kind ?? entered.item.type}${described?.step !== undefined ? `, step ${described.step}` : ''}, ${where}.${entered.erased ? ` ${erasureNotice(entered.erased)}` : ''}`;
        const foot =
          end < text.length
            ? `[characters ${offset}–${end} of ${text.length}; ${text.length - end} left: ${name}({ "id": ${JSON.stringify(asked)}, "offset": ${end} }) reads on]`
            : offset > 0
              ? `[characters ${offset}–${end} of ${text.length}; end of item]`
              : undefined;
        await access.record([{ type: 'memory.recalled', ids: [id], step: context.step, callId: context.callId }]);
        return [head, page, ...(foot ? [foot] : [])].join('\n');
      }
      if (args.offset !== undefined) throw new ToolFailedError(name, '"offset" goes with "id", not with "query"');
      const limit = args.limit ?? defaultLimit;
      if (limit < 1 || limit > MAX_LIMIT) throw new ToolFailedError(name, `limit must be from 1 to ${MAX_LIMIT}, got ${limit}`);
      const query = args.query!;
      const hits = index.search(query, index.seenIds(state), limit);
      await access.record([{ type: 'memory.recalled', ids: hits.map((h) => h.id), query, step: context.step, callId: context.callId }]);
      if (hits.length === 0) return `No item you no longer see as it was matches ${JSON.stringify(query)}.`;
      const lines = [`${hits.length} hit(s) for ${JSON.stringify(query)} among items you no longer see as they were:`];
      for (let i = 0; i < hits.length; i++) {
        const hit = hits[i]!;
        const entered = await readItem(session.log, session.id, hit.id);
        const snippet = entered ? snippetOf(recallTextOf(entered.item), hit.terms) : '';
        lines.push(`${i + 1}. ${hit.id} ${hit.kind}${hit.step !== undefined ? `, step ${hit.step}` : ''}: ${snippet}`);
      }
      lines.push(`Read one in full with ${name}({ "id": "<id>" }).`);
      return lines.join('\n');
    },
  });
};

/** Whether a tool is a recall tool (by its description, which a re-run's tool keeps): its name, or undefined. */
export const recallToolNameOf = (tools: readonly { readonly name: string; readonly description: string }[]): string | undefined =>
  tools.find((t) => t.description.startsWith(RECALL_DESCRIPTION_START))?.name;
