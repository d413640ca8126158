// ProviderCompactPolicy: the provider compacts (OpenAI `responses.compact`, Anthropic's compaction request); its opaque item replaces the old items, recorded.
import { z } from 'zod';
import { approxTokenizer } from '../context/index.js';
import { emptyCompactLists, type ComponentDescription, type MemorySnapshot } from '../events/index.js';
import { canonicalJson, isRecord } from '../base/index.js';
import { objectWithMethods, parseOptions } from '../base/options.js';
import type { MemoryItem } from '../items/index.js';
import { untilAborted, type ModelClient } from '../model/index.js';
import { compactionCut } from './cut.js';
import { EmptySummaryError } from './errors.js';
import { factLists } from './facts.js';
import { compactTriggerOf } from './trigger.js';
import type { CompactContext, CompactOptions, CompactPolicy, CompactReason, CompactResult } from './types.js';

/** What a provider is asked to compact: the oldest items of memory (the newest `maxItems` stay as they are). */
export interface ProviderCompactRequest {
  readonly model: string;
  readonly items: readonly MemoryItem[];
  /** Replaces or adds to the provider's summarization instructions (`session.compact(policy, { instructions })`, the policy's own). */
  readonly instructions?: string;
}

/** What the provider gave back. */
export interface ProviderCompaction {
  /** What replaces the compacted items, the provider's opaque compacted item among them (OpenAI: the user messages, then a `compaction` item). */
  readonly items: readonly MemoryItem[];
  /** The usage the provider reported, with the keys of `model.responded.usage` (`inputTokens`, `outputTokens`, ..., `raw`). */
  readonly usage?: Readonly<Record<string, unknown>>;
  /** The provider's response less the items (its id, model, stop reason, usage as sent), recorded for audit. */
  readonly response?: Readonly<Record<string, unknown>>;
}

/** A provider's compaction call: `openAiResponsesCompactor(client)`, `anthropicCompactor(client, ...)`, or your own. */
export interface ProviderCompactor {
  /** Recorded in the policy's settings: `openai-responses`, `anthropic`, ... */
  readonly provider: string;
  compact(request: ProviderCompactRequest, options?: { readonly signal?: AbortSignal }): Promise<ProviderCompaction>;
}

/** The key of the JSON a recording keeps as the compaction's `rawAnswer`: `{ "providerCompaction": { items, response } }`. */
export const PROVIDER_COMPACTION_KEY = 'providerCompaction';

/** The recorded answer of a compaction, or undefined when `text` is not one. */
const recordedCompactionOf = (text: unknown): { items: MemoryItem[]; response?: Record<string, unknown> } | undefined => {
  if (typeof text !== 'string' || !text.includes(PROVIDER_COMPACTION_KEY)) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    const inner = isRecord(parsed) ? parsed[PROVIDER_COMPACTION_KEY] : undefined;
    if (!isRecord(inner) || !Array.isArray(inner['items'])) return undefined;
    return { items: inner['items'] as MemoryItem[], ...(isRecord(inner['response']) ? { response: inner['response'] } : {}) };
  } catch {
    return undefined;
  }
};

/**
 * A compactor over a {@link ModelClient}: `create({ model, items, systemPrompt: instructions })` compacts, and the
 * answer's `items` replace the compacted ones (its `usage` is the compaction's). A client that answers with a recorded
 * compaction (`outputText` holding `{ "providerCompaction": ... }`, as a replay's summarizer does) gives that back.
 * @example new ProviderCompactPolicy(modelClientCompactor(myCompactingClient, 'my-provider'), { model: 'm' })
 */
export const modelClientCompactor = (client: ModelClient, provider = 'model-client'): ProviderCompactor => ({
  provider,
  async compact(request, options = {}) {
    const answer = await client.create(
      { model: request.model, items: [...request.items], ...(request.instructions !== undefined ? { systemPrompt: request.instructions } : {}) },
      options.signal ? { signal: options.signal } : undefined,
    );
    const usage = isRecord(answer?.usage) ? { usage: answer.usage as Record<string, unknown> } : {};
    const recorded = recordedCompactionOf(answer?.outputText);
    if (recorded) return { ...recorded, ...usage };
    return { items: Array.isArray(answer?.items) ? answer.items : [], ...usage };
  },
});

/** Options of {@link ProviderCompactPolicy}. */
export interface ProviderCompactOptions {
  /** The model that compacts (recorded). */
  readonly model: string;
  /** The newest items kept as they are, the cut moved back to a user turn (never between a call and its output). Default 0: all of memory is compacted. */
  readonly maxItems?: number;
  /** Compact automatically above this many items (default: no item trigger). */
  readonly compactAbove?: number;
  /** Compact automatically above this many tokens (memory's, or the provider's reported input tokens). */
  readonly compactAboveTokens?: number;
  /** The newest items kept by tokens (with `compactAboveTokens`). */
  readonly keepTokens?: number;
  /** Instructions sent with every compaction (focus instructions given to `session.compact` come after them). */
  readonly instructions?: string;
}

const count = z.number().int().nonnegative();
/** The options a ProviderCompactPolicy takes, which its recorded settings hold too. */
const policyFields = {
  model: z.string().min(1),
  maxItems: count.optional(),
  compactAbove: count.optional(),
  compactAboveTokens: count.optional(),
  keepTokens: count.optional(),
  instructions: z.string().optional(),
};
const ProviderCompactOptionsSchema = z
  .strictObject(policyFields)
  .superRefine((o, ctx) => {
    if (o.keepTokens !== undefined && o.compactAboveTokens !== undefined && o.keepTokens > o.compactAboveTokens) {
      ctx.addIssue({ code: 'custom', path: ['keepTokens'], message: `must be at most compactAboveTokens (${o.compactAboveTokens}), got ${o.keepTokens}` });
    }
  });
const CompactorSchema = z.union([objectWithMethods<ProviderCompactor>('a ProviderCompactor', 'compact'), objectWithMethods<ModelClient>('a ModelClient', 'create')]);

/** The recorded settings of a ProviderCompactPolicy (what `compactPolicyFromDescription` reads). */
export const ProviderCompactSettingsSchema = z.object({ provider: z.string().min(1), ...policyFields });

/**
 * Compaction by the provider itself: the oldest items go to the provider's compaction call (OpenAI `responses.compact`,
 * Anthropic's compaction request, or your `ModelClient`), and what it returns (an opaque compacted item, OpenAI with the
 * user messages before it) replaces them in memory; the newest `maxItems` stay as they are. The session records it as
 * `memory.compacted` like any policy: the provider's items inline in the layout, every original item still in the log,
 * the tokens before and after, the provider's `usage`, and the provider's answer as the summarizer's `rawAnswer`, so a
 * re-run answers from the recording. The summary is left as it was. An answer without items fails (`EMPTY_SUMMARY`,
 * recorded as `compaction.failed`; memory is untouched).
 * @example
 * import OpenAI from 'openai';
 * import { openAiResponsesCompactor } from 'context-ledger/adapters/openai';
 * const policy = new ProviderCompactPolicy(openAiResponsesCompactor(new OpenAI()), { model: 'gpt-5.4', compactAboveTokens: 100_000, maxItems: 6 });
 */
export class ProviderCompactPolicy implements CompactPolicy {
  readonly compactor: ProviderCompactor;
  readonly model: string;
  readonly maxItems: number;
  readonly compactAbove: number | undefined;
  readonly compactAboveTokens: number | undefined;
  readonly keepTokens: number | undefined;
  readonly instructions: string | undefined;

  constructor(compactor: ProviderCompactor | ModelClient, options: ProviderCompactOptions) {
    parseOptions(CompactorSchema, compactor, 'ProviderCompactPolicy (its compactor)');
    const o = parseOptions(ProviderCompactOptionsSchema, options, 'ProviderCompactPolicy');
    this.compactor = typeof (compactor as ProviderCompactor).compact === 'function' ? (compactor as ProviderCompactor) : modelClientCompactor(compactor as ModelClient);
    this.model = o.model;
    this.maxItems = o.maxItems ?? 0;
    this.compactAbove = o.compactAbove;
    this.compactAboveTokens = o.compactAboveTokens;
    this.keepTokens = o.keepTokens;
    this.instructions = o.instructions;
  }

  shouldCompact(snapshot: MemorySnapshot | null | undefined, context?: CompactContext): boolean {
    return this.compactTrigger(snapshot, context) !== undefined;
  }

  /** Items above `compactAbove`, or tokens / reported input tokens above `compactAboveTokens`. */
  compactTrigger(snapshot: MemorySnapshot | null | undefined, context?: CompactContext): CompactReason | undefined {
    return compactTriggerOf({ compactAbove: this.compactAbove, keepItems: this.maxItems, compactAboveTokens: this.compactAboveTokens, keepTokens: this.keepTokens }, snapshot, context);
  }

  async compact(snapshot: MemorySnapshot, options: CompactOptions = {}): Promise<CompactResult> {
    const items = snapshot?.items ?? [];
    const summary = snapshot?.summary ?? null;
    const base = {
      ...emptyCompactLists(),
      ...factLists(snapshot?.facts),
      readFiles: [...(snapshot?.readFiles ?? [])],
      modifiedFiles: [...(snapshot?.modifiedFiles ?? [])],
      summary,
    };
    const { cut } =
      this.maxItems === 0 && this.keepTokens === undefined
        ? { cut: items.length }
        : compactionCut(items, { maxItems: this.maxItems, keepTokens: this.keepTokens, compactAboveTokens: this.compactAboveTokens }, options.tokenizer ?? approxTokenizer);
    if (cut <= 0) return { ...base, memory: { items: [...items], summary } };
    const compacted = items.slice(0, cut);
    const focus = [this.instructions, options.instructions].filter((s): s is string => s !== undefined && s.trim() !== '');
    const request: ProviderCompactRequest = { model: this.model, items: compacted, ...(focus.length > 0 ? { instructions: focus.join('\n\n') } : {}) };
    const answer = await untilAborted(
      Promise.resolve().then(() => this.compactor.compact(request, options.signal ? { signal: options.signal } : {})),
      options.signal,
      `the ${this.compactor.provider} compaction call`,
    );
    const returned = Array.isArray(answer?.items) ? answer.items : [];
    if (returned.length === 0 || returned.some((item) => !isRecord(item) || typeof item.type !== 'string')) {
      throw new EmptySummaryError('ProviderCompactPolicy', `${this.compactor.provider} returned no compacted items`);
    }
    // An item the provider gave back unchanged (a user message) is the same item: it keeps its id.
    const originals = new Map<string, MemoryItem[]>();
    for (const item of compacted) {
      const key = canonicalJson(item);
      originals.set(key, [...(originals.get(key) ?? []), item]);
    }
    const replacement = returned.map((item) => originals.get(canonicalJson(item))?.shift() ?? item);
    const response = answer.response ?? {};
    const rawAnswer = JSON.stringify({ [PROVIDER_COMPACTION_KEY]: { items: returned, response } });
    return {
      ...base,
      memory: { items: [...replacement, ...items.slice(cut)], summary },
      summarizer: {
        request: { provider: this.compactor.provider, model: this.model, items: compacted.length, ...(request.instructions !== undefined ? { instructions: request.instructions } : {}) },
        rawAnswer,
      },
      ...(isRecord(answer.usage) ? { usage: JSON.parse(JSON.stringify(answer.usage)) as Record<string, unknown> } : {}),
    };
  }

  describe(): ComponentDescription {
    return {
      name: 'ProviderCompactPolicy',
      settings: {
        provider: this.compactor.provider,
        model: this.model,
        maxItems: this.maxItems,
        ...(this.compactAbove !== undefined ? { compactAbove: this.compactAbove } : {}),
        ...(this.compactAboveTokens !== undefined ? { compactAboveTokens: this.compactAboveTokens } : {}),
        ...(this.keepTokens !== undefined ? { keepTokens: this.keepTokens } : {}),
        ...(this.instructions !== undefined ? { instructions: this.instructions } : {}),
      },
    };
  }
}
