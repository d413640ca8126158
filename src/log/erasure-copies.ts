// Copies of erased content in later events, found while an erase reads the session in order: what to scrub and how.
import { canonicalJson, isRecord } from '../base/index.js';
import { textOf, type MemoryItem } from '../items/index.js';
import { ERASED_PLACEHOLDER, placeholderOf } from './erasure.js';
import { payloadOf } from './hash-chain.js';

/** An event whose content this erase changes: erased itself (`full`), or scrubbed of copies (`items`: its scrubbed item ids). */
interface Changed {
  /** The payload as it will be stored. */
  readonly payload: Record<string, unknown>;
  /** The whole event as it will be stored (envelope, payload, mark): what a memory state keeps of a fact. */
  readonly stored: Record<string, unknown>;
  readonly full: boolean;
  readonly items: ReadonlySet<string>;
}

/** A copy found: the scrubbed payload, and the ids of the event's own items it scrubbed. */
export interface ScrubbedCopy {
  readonly payload: Record<string, unknown>;
  readonly items: readonly string[];
  /** The event was erased by an earlier erase: only a digest its placeholder kept goes; it keeps its mark. */
  readonly erasedBefore?: true;
}

/** Events whose placeholder keeps a digest over content (of the memory a step sent, or of a checkpoint's state). */
const DIGEST_TYPES: ReadonlySet<string> = new Set(['context.projected', 'model.requested', 'checkpoint.taken']);

const seqOfId = (id: string): number => Number(id.slice(0, id.indexOf(':')));
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The item an event's payload holds at `index`, as the fold gives it (a tool result's item is built from it). */
const itemAt = (type: string, payload: Record<string, unknown>, index: number): unknown => {
  switch (type) {
    case 'user.input':
    case 'model.output':
    case 'model.responded':
    case 'memory.restored':
      return list(payload['items'])[index];
    case 'tool.result':
      return index === 0 ? { type: 'function_call_output', call_id: payload['callId'], output: payload['output'] } : undefined;
    case 'memory.compacted':
    case 'memory.edited': {
      const slot = list(payload['layout'])[index];
      return isRecord(slot) ? slot['item'] : undefined;
    }
    default:
      return undefined;
  }
};

/** Every item an event's payload brings into memory, with its index (as the fold numbers them). */
const itemsOf = (type: string, payload: Record<string, unknown>): { index: number; item: unknown }[] => {
  switch (type) {
    case 'user.input':
    case 'model.output':
    case 'model.responded':
    case 'memory.restored':
      return list(payload['items']).map((item, index) => ({ index, item }));
    case 'tool.result':
      return payload['parentCallId'] === undefined ? [{ index: 0, item: itemAt(type, payload, 0) }] : [];
    case 'memory.compacted':
    case 'memory.edited':
      return list(payload['layout']).flatMap((slot, index) => (isRecord(slot) && 'item' in slot ? [{ index, item: slot['item'] }] : []));
    default:
      return [];
  }
};

/** The summary an event sets (summary-set, restore, compaction), or undefined. */
const summaryOf = (type: string, payload: Record<string, unknown>): string | null | undefined =>
  type === 'memory.summary-set' || type === 'memory.restored' || type === 'memory.compacted' ? ((payload['summary'] as string | null | undefined) ?? null) : undefined;

/** What a memory state keeps of a fact event: all but `sessionId`, `at`, `v`, `prevHash`, `hash`, `contentDigest`, `contentSalt` (as the memory layer's factOf). */
const factOf = (stored: Record<string, unknown>): Record<string, unknown> => {
  const { sessionId: _s, at: _a, v: _v, prevHash: _p, hash: _h, contentDigest: _d, contentSalt: _c, ...fact } = stored;
  return fact;
};

/** Where the parts of memory came from, by seq: enough to tell whether memory holds content this erase changes. */
interface Sources {
  entries: string[];
  /** seq of the event whose summary memory shows */
  summary: number | null;
  /** block name → seq of its `memory.noted` */
  blocks: Map<string, number>;
}

/**
 * Follows a session event by event (in seq order, each once) for one erase: the events erased in it are given with
 * their new payload (`erased`); every other event is checked for copies of content this erase removes, and the
 * scrubbed payload is returned for those that hold any. A copy is:
 * - in `session.rewound.memory`: an item, the summary, a fact, a working-memory block or the last compaction whose
 *   source event this erase changes (it becomes what the fold of the erased log gives);
 * - in `memory.restored` and a compaction's inline items: an item equal to an erased one, or (inline) standing for one
 *   (`replaces`), and a summary equal to an erased one; a compaction's summarizer request when it summarised one;
 * - the answer (`tool.result`) of a recall that read an erased item, an `approval.requested`'s arguments of an erased
 *   call, a `run.finished.outputText` equal to an erased answer;
 * - digests over the content: `context.projected.digest` (and its `tokenCounts`) and the step's `model.requested.digest`
 *   when memory held changed content, `checkpoint.taken.digest` after the first change.
 * Text the model or a policy derived (a summary, a plan, a later answer) is not recognised.
 */
export const createCopyScan = () => {
  const changed = new Map<number, Changed>();
  let firstChanged: number | undefined;
  const erasedItems = new Set<string>();
  const erasedSummaries = new Set<string>();
  const erasedTexts = new Set<string>();
  const erasedCalls = new Set<string>();
  const recallCalls = new Set<string>();
  const sources: Sources = { entries: [], summary: null, blocks: new Map() };
  const blockHistory: { seq: number; blocks: Map<string, number> }[] = [{ seq: 0, blocks: new Map() }];
  let scrubRequestOf: { runId: unknown; step: unknown } | undefined;

  const isScrubbed = (id: string): boolean => {
    const c = changed.get(seqOfId(id));
    return c !== undefined && (c.full || c.items.has(id));
  };
  const summaryScrubbed = (seq: number | null): boolean => seq !== null && isScrubbed(`${seq}:summary`);

  /** Remembers the original content a change removes, so later copies of it are recognised. */
  const rememberItem = (item: unknown): void => {
    if (!isRecord(item)) return;
    erasedItems.add(canonicalJson(item));
    const text = textOf(item as MemoryItem);
    if (text !== '') erasedTexts.add(text);
    if (item['type'] === 'function_call' && typeof item['call_id'] === 'string') erasedCalls.add(item['call_id']);
    for (const call of list(item['tool_calls'])) if (isRecord(call) && typeof call['id'] === 'string') erasedCalls.add(call['id']);
  };
  const rememberSummary = (summary: string | null | undefined): void => {
    if (typeof summary === 'string' && summary.trim() !== '') erasedSummaries.add(summary);
  };

  const setBlocks = (seq: number, blocks: Map<string, number>): void => {
    sources.blocks = blocks;
    blockHistory.push({ seq, blocks });
  };
  const blocksAt = (seq: number): Map<string, number> => {
    for (let i = blockHistory.length - 1; i >= 0; i--) if (blockHistory[i]!.seq <= seq) return blockHistory[i]!.blocks;
    return new Map();
  };

  /** Memory's sources after the event (its payload as stored from now on), mirroring the reducer on ids only. */
  const follow = (seq: number, type: string, payload: Record<string, unknown>): void => {
    switch (type) {
      case 'user.input':
      case 'model.output':
      case 'model.responded':
      case 'tool.result':
        for (const { index } of itemsOf(type, payload)) sources.entries.push(`${seq}:${index}`);
        return;
      case 'memory.summary-set':
        sources.summary = payload['summary'] === null ? null : seq;
        return;
      case 'memory.restored':
        sources.entries = itemsOf(type, payload).map(({ index }) => `${seq}:${index}`);
        sources.summary = (payload['summary'] ?? null) === null ? null : seq;
        return;
      case 'memory.cleared':
        sources.entries = [];
        sources.summary = null;
        setBlocks(seq, new Map());
        return;
      case 'memory.noted': {
        const blocks = new Map(sources.blocks);
        if (typeof payload['block'] === 'string') blocks.set(payload['block'], seq);
        setBlocks(seq, blocks);
        return;
      }
      case 'memory.compacted':
      case 'memory.edited': {
        // An edit without a layout left the items as they were; an edit never changes the summary.
        if (type === 'memory.edited' && !Array.isArray(payload['layout'])) return;
        const present = new Set(sources.entries);
        sources.entries = list(payload['layout']).flatMap((slot, i) => {
          if (!isRecord(slot)) return [];
          if (typeof slot['keep'] === 'string') return present.has(slot['keep']) ? [slot['keep']] : [];
          return [`${seq}:${i}`];
        });
        if (type === 'memory.compacted') sources.summary = payload['summary'] === null ? null : seq;
        return;
      }
      case 'session.rewound': {
        const memory = isRecord(payload['memory']) ? payload['memory'] : {};
        sources.entries = list(memory['entries']).flatMap((e) => (isRecord(e) && typeof e['id'] === 'string' ? [e['id']] : []));
        const summaryId = str(memory['summaryId']);
        sources.summary = summaryId === undefined ? null : seqOfId(summaryId);
        setBlocks(seq, new Map(blocksAt(typeof payload['toSeq'] === 'number' ? payload['toSeq'] : 0)));
        return;
      }
      default:
        return;
    }
  };

  /** Whether what the model was sent at this point (items, summary, working memory) holds content this erase changes. */
  const promptHoldsChanged = (): boolean =>
    changed.size > 0 && (sources.entries.some(isScrubbed) || summaryScrubbed(sources.summary) || [...sources.blocks.values()].some((s) => changed.get(s)?.full === true));

  /** A carried memory state with every part whose source changed as the fold of the erased log gives it. */
  const scrubMemory = (memory: Record<string, unknown>, toSeq: number): Record<string, unknown> | undefined => {
    let touched = false;
    const out: Record<string, unknown> = { ...memory };
    const entries = list(memory['entries']).map((entry) => {
      if (!isRecord(entry) || typeof entry['id'] !== 'string' || !isScrubbed(entry['id'])) return entry;
      const id = entry['id'];
      const source = changed.get(seqOfId(id))!;
      const item = itemAt(String(source.stored['type']), source.payload, Number(id.slice(id.indexOf(':') + 1)));
      touched = true;
      return { ...entry, item: item ?? placeholderOf(entry['item']) };
    });
    out['entries'] = entries;
    const summaryId = str(memory['summaryId']);
    if (summaryId !== undefined && isScrubbed(summaryId)) {
      const source = changed.get(seqOfId(summaryId))!;
      out['summary'] = summaryOf(String(source.stored['type']), source.payload) ?? ERASED_PLACEHOLDER;
      touched = true;
    }
    out['facts'] = list(memory['facts']).map((fact) => {
      const source = isRecord(fact) && typeof fact['seq'] === 'number' ? changed.get(fact['seq']) : undefined;
      if (!source) return fact;
      touched = true;
      return factOf(source.stored);
    });
    const last = memory['lastCompaction'];
    const compaction = isRecord(last) && typeof last['seq'] === 'number' ? changed.get(last['seq']) : undefined;
    if (isRecord(last) && compaction) {
      const result = isRecord(compaction.payload['result']) ? compaction.payload['result'] : {};
      out['lastCompaction'] = { ...last, trigger: compaction.payload['trigger'], policy: compaction.payload['policy'], result };
      out['readFiles'] = list(result['readFiles']);
      out['modifiedFiles'] = list(result['modifiedFiles']);
      touched = true;
    }
    const sourceOfBlock = blocksAt(toSeq);
    out['blocks'] = list(memory['blocks']).map((block) => {
      const from = isRecord(block) && typeof block['name'] === 'string' ? sourceOfBlock.get(block['name']) : undefined;
      const source = from === undefined ? undefined : changed.get(from);
      if (!isRecord(block) || !source) return block;
      touched = true;
      const p = source.payload;
      return {
        name: block['name'],
        text: p['text'],
        ...(p['description'] !== undefined ? { description: p['description'] } : {}),
        ...(p['maxChars'] !== undefined ? { maxChars: p['maxChars'] } : {}),
      };
    });
    return touched ? out : undefined;
  };

  /** The payload without its copies of changed content, and the ids of its items scrubbed; undefined when it holds none. */
  const scrub = (seq: number, type: string, payload: Record<string, unknown>): ScrubbedCopy | undefined => {
    const items: string[] = [];
    /** A compaction's or a history edit's layout with each inline item that copies erased content as its placeholder; undefined when none does. */
    const scrubLayout = (event: Record<string, unknown>): unknown[] | undefined => {
      let touched = false;
      const layout = list(event['layout']).map((slot, i) => {
        if (!isRecord(slot) || !isRecord(slot['item'])) return slot;
        const replaces = str(slot['replaces']);
        if (!((replaces !== undefined && isScrubbed(replaces)) || erasedItems.has(canonicalJson(slot['item'])))) return slot;
        items.push(`${seq}:${i}`);
        touched = true;
        return { ...slot, item: placeholderOf(slot['item']) };
      });
      return touched ? layout : undefined;
    };
    switch (type) {
      case 'session.rewound': {
        if (changed.size === 0 || !isRecord(payload['memory'])) return undefined;
        const memory = scrubMemory(payload['memory'], typeof payload['toSeq'] === 'number' ? payload['toSeq'] : 0);
        return memory ? { payload: { ...payload, memory }, items } : undefined;
      }
      case 'memory.restored': {
        let touched = false;
        const restored = list(payload['items']).map((item, i) => {
          if (!isRecord(item) || !erasedItems.has(canonicalJson(item))) return item;
          items.push(`${seq}:${i}`);
          touched = true;
          return placeholderOf(item);
        });
        const out: Record<string, unknown> = { ...payload, items: restored };
        if (typeof payload['summary'] === 'string' && erasedSummaries.has(payload['summary'])) {
          out['summary'] = ERASED_PLACEHOLDER;
          items.push(`${seq}:summary`);
          touched = true;
        }
        return touched ? { payload: out, items } : undefined;
      }
      case 'memory.compacted': {
        const layout = scrubLayout(payload);
        let touched = layout !== undefined;
        const out: Record<string, unknown> = layout !== undefined ? { ...payload, layout } : { ...payload };
        if (typeof payload['summary'] === 'string' && erasedSummaries.has(payload['summary'])) {
          out['summary'] = ERASED_PLACEHOLDER;
          if (isRecord(payload['result']) && payload['result']['summary'] === payload['summary']) out['result'] = { ...payload['result'], summary: ERASED_PLACEHOLDER };
          items.push(`${seq}:summary`);
          touched = true;
        }
        const summarizer = payload['summarizer'];
        if (isRecord(summarizer) && list(payload['droppedIds']).some((id) => typeof id === 'string' && isScrubbed(id))) {
          // what the summarizer was sent quoted the items it summarised; its answer (like the summary) is the model's own
          const request = summarizer['request'];
          const calls = isRecord(request) && Array.isArray(request['calls']) ? request['calls'] : undefined;
          out['summarizer'] = {
            ...summarizer,
            request:
              calls && isRecord(request)
                ? { ...request, calls: calls.map((call) => (isRecord(call) ? { ...call, request: placeholderOf(call['request']) } : call)) }
                : placeholderOf(request),
          };
          touched = true;
        }
        return touched ? { payload: out, items } : undefined;
      }
      case 'memory.edited': {
        // A framework's history edit carries its new items inline, as a compaction does (decision 0028).
        const layout = scrubLayout(payload);
        return layout !== undefined ? { payload: { ...payload, layout }, items } : undefined;
      }
      case 'tool.result':
        if (typeof payload['callId'] !== 'string' || !recallCalls.has(payload['callId'])) return undefined;
        return { payload: { ...payload, output: ERASED_PLACEHOLDER }, items: payload['parentCallId'] === undefined ? [`${seq}:0`] : [] };
      case 'approval.requested':
        if (typeof payload['callId'] !== 'string' || !erasedCalls.has(payload['callId'])) return undefined;
        return { payload: { ...payload, arguments: ERASED_PLACEHOLDER }, items };
      case 'run.finished':
        if (typeof payload['outputText'] !== 'string' || !erasedTexts.has(payload['outputText'])) return undefined;
        return { payload: { ...payload, outputText: ERASED_PLACEHOLDER }, items };
      case 'context.projected': {
        if (!promptHoldsChanged()) return undefined;
        scrubRequestOf = { runId: payload['runId'], step: payload['step'] };
        const { tokenCounts: _counts, ...rest } = payload;
        return { payload: { ...rest, digest: ERASED_PLACEHOLDER }, items };
      }
      case 'model.requested': {
        const due = scrubRequestOf;
        if (!due || due.runId !== payload['runId'] || due.step !== payload['step']) return undefined;
        scrubRequestOf = undefined;
        return { payload: { ...payload, digest: ERASED_PLACEHOLDER }, items };
      }
      case 'checkpoint.taken':
        if (firstChanged === undefined || seq <= firstChanged) return undefined;
        return { payload: { ...payload, digest: ERASED_PLACEHOLDER }, items };
      default:
        return undefined;
    }
  };

  const noteRecall = (type: string, payload: Record<string, unknown>): void => {
    if (type === 'memory.recalled' && typeof payload['callId'] === 'string' && list(payload['ids']).some((id) => typeof id === 'string' && isScrubbed(id))) {
      recallCalls.add(payload['callId']);
    }
  };

  return {
    /**
     * The payload to erase of an event this erase erases, with its copies of other content it changes scrubbed first
     * (what its placeholder keeps, such as a projection digest, must not be a digest over erased content).
     */
    beforeErasing(seq: number, raw: Record<string, unknown>): Record<string, unknown> {
      const type = String(raw['type']);
      const payload = payloadOf(raw);
      noteRecall(type, payload);
      return scrub(seq, type, payload)?.payload ?? payload;
    },
    /**
     * An event this erase erases: `raw` as stored, `stored` the event as it will be stored (placeholder payload and
     * mark). Its original content is remembered, so copies of it are found later.
     */
    erased(seq: number, raw: Record<string, unknown>, stored: Record<string, unknown>): void {
      const type = String(raw['type']);
      const original = payloadOf(raw);
      for (const { item } of itemsOf(type, original)) rememberItem(item);
      rememberSummary(summaryOf(type, original));
      if (type === 'model.responded' && typeof original['outputText'] === 'string' && original['outputText'] !== '') erasedTexts.add(original['outputText']);
      changed.set(seq, { payload: payloadOf(stored), stored, full: true, items: new Set() });
      firstChanged ??= seq;
      follow(seq, type, payloadOf(stored));
    },
    /**
     * Any other event, in order: the scrubbed payload when it holds copies of content this erase changes (then call
     * {@link scrubbed} with the event as it will be stored), else undefined.
     */
    check(seq: number, raw: Record<string, unknown>): ScrubbedCopy | undefined {
      const type = String(raw['type']);
      const payload = payloadOf(raw);
      noteRecall(type, payload);
      // an event erased earlier holds only placeholders, but a digest it kept may cover content erased now; one
      // scrubbed earlier may hold new copies
      const mark = raw['erased'];
      const erasedBefore = isRecord(mark) && mark['copy'] !== true;
      const found = erasedBefore && !DIGEST_TYPES.has(type) ? undefined : scrub(seq, type, payload);
      // scrubbed before, and nothing new: left as it is
      const copy = found && canonicalJson(found.payload) !== canonicalJson(payload) ? (erasedBefore ? { ...found, erasedBefore: true as const } : found) : undefined;
      if (!copy) follow(seq, type, payload);
      return copy;
    },
    /** The event `check` found copies in, as it will be stored. */
    scrubbed(seq: number, raw: Record<string, unknown>, copy: ScrubbedCopy, stored: Record<string, unknown>): void {
      const type = String(raw['type']);
      const original = payloadOf(raw);
      for (const id of copy.items) {
        const index = id.slice(id.indexOf(':') + 1);
        if (index === 'summary') rememberSummary(summaryOf(type, original));
        else rememberItem(itemAt(type, original, Number(index)));
      }
      changed.set(seq, { payload: copy.payload, stored, full: false, items: new Set(copy.items) });
      firstChanged ??= seq;
      follow(seq, type, copy.payload);
    },
  };
};
