// LlmCompactPolicy: a model writes a structured summary of the older items; the newest are kept.
import type { ComponentDescription, MemorySnapshot } from '../events/index.js';
import {
  isFunctionCall,
  isFunctionCallOutput,
  isMessage,
  isReasoning,
  isUserMessage,
  lastAssistantMessage,
  textOf,
  toolCallArguments,
  toolCallName,
  userMessage,
  type MemoryItem,
} from '../items/index.js';
import { approxTokenizer, itemTokenCount, type Tokenizer } from '../context/index.js';
import { ContextOverflowError, untilAborted, type ModelClient, type ModelRequest } from '../model/index.js';
import { isContentFree } from './content-free.js';
import { compactionCut } from './cut.js';
import { EmptySummaryError, SummarizerOverflowError } from './errors.js';
import { retainedUserMessages, type RetainUserMessages } from './retain.js';
import { compactTriggerOf } from './trigger.js';
import { factLists } from './facts.js';
import { extractFileOperations } from './file-tracking.js';
import { parseSummaryAnswer, renderSummary, type StructuredSummary } from './summary-format.js';
import { DEFAULT_MAX_SUMMARY_CHARS, keepNewestChars } from './text.js';
import { emptyCompactLists } from '../events/index.js';
import { uniqueStrings } from '../base/index.js';
import { parseOptions } from '../base/options.js';
import { LlmCompactPolicyArgsSchema } from './options.js';
import { recallHintLine, type CompactContext, type CompactOptions, type CompactPolicy, type CompactReason, type CompactResult } from './types.js';

export interface LlmCompactOptions {
  /** Compact when items exceed this (default: maxItems). E.g. keep 10, compact above 30. */
  readonly compactAbove?: number;
  /** The previous summary fed back to the model is cut to this many characters, oldest first (default 4,000). */
  readonly maxSummaryChars?: number;
  /** Each item's text in the prompt is cut to this many characters (default 2,000). */
  readonly maxItemChars?: number;
  readonly systemPrompt?: string;
  /** Compact when memory's tokens, or the provider's reported input tokens, exceed this. */
  readonly compactAboveTokens?: number;
  /** Keep at most this many of the newest tokens (at a user turn or step boundary, never splitting a pair). */
  readonly keepTokens?: number;
  /** Keep the user's messages of the compacted span as items (`{ maxChars }`: the newest within that many characters). */
  readonly retainUserMessages?: RetainUserMessages;
  /** Each summarizer request fits this many tokens: the items are summarised in chunks, each folding in the last answer. */
  readonly summarizerMaxTokens?: number;
}

/** The usage of several summarizer calls: each numeric count summed (the providers' raw objects are not). */
const summedUsage = (usages: readonly Record<string, unknown>[]): Record<string, number> => {
  const sum: Record<string, number> = {};
  for (const usage of usages) for (const [key, value] of Object.entries(usage)) if (typeof value === 'number' && Number.isFinite(value)) sum[key] = (sum[key] ?? 0) + value;
  return sum;
};

/** What the `Previous summary:` lines around a carried summary cost, beyond its text. */
const SUMMARY_HEADER_TOKENS = 8;

/**
 * The tokens a chunk's prompt may carry of the previous summary under `maxTokens`: what is left of half the bound once
 * the rest of the prompt's fixed part is counted, and never less than an eighth of the bound (a summary cut to nothing
 * would lose what the earlier chunks said).
 */
const carriedSummaryTokens = (maxTokens: number, withoutSummary: number): number => Math.max(Math.floor(maxTokens / 2) - withoutSummary - SUMMARY_HEADER_TOKENS, Math.floor(maxTokens / 8));

/** The newest text of `summary` (at most `chars` characters) whose token count is at most `tokens`; '' when none fits. */
const newestWithinTokens = (summary: string, chars: number, tokens: number, tokenizer: Tokenizer): string => {
  let limit = chars;
  for (;;) {
    const text = keepNewestChars(summary, limit);
    const count = tokenizer.count(text);
    if (count <= tokens || limit <= 0) return text;
    limit = Math.min(limit - 1, Math.floor((limit * tokens) / count));
  }
};

/** How many times a summarizer request that overflows is retried with its items cut further. */
const SUMMARIZER_OVERFLOW_RETRIES = 3;

export const LLM_COMPACT_SYSTEM_PROMPT =
  'You summarise the earlier part of an AI agent session so that the agent can continue its work from your summary ' +
  'and the recent items it keeps. Be factual and specific: names of files, functions, commands, errors and test results.';

const isUsageRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Cuts text to `max` characters, saying how many more there were (the summarizer's prompt shows each item so). */
const clipWithCount = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}… [${text.length - max} more chars]` : text);

const describeItem = (item: MemoryItem, max: number): string => {
  if (isMessage(item)) {
    const calls = (item.tool_calls ?? []).map((c) => `${toolCallName(c) ?? '?'}(${clipWithCount(toolCallArguments(c), max)}) [${c.id}]`);
    const text = clipWithCount(textOf(item), max);
    return `${item.role}: ${text}${calls.length ? `${text ? '\n  ' : ''}calls ${calls.join(', ')}` : ''}`;
  }
  if (isFunctionCall(item)) return `tool call ${item.name}(${clipWithCount(item.arguments, max)}) [${item.call_id}]`;
  if (isFunctionCallOutput(item)) return `tool result [${item.call_id}]: ${clipWithCount(item.output, max)}`;
  if (isReasoning(item)) {
    const text = typeof item.summary === 'string' ? item.summary : typeof item.text === 'string' ? item.text : JSON.stringify(item.summary ?? item.content ?? '');
    return `reasoning: ${clipWithCount(text, max)}`;
  }
  return `${item.type}: ${clipWithCount(JSON.stringify(item), max)}`;
};

/**
 * Keeps the newest `maxItems` items (cut moved back to a user turn, never between a call and its
 * output) and asks the model for a JSON summary of the rest, rendered into sections. A session that
 * is one long request is cut at a step boundary instead, with the request carried as the goal.
 * A failing, empty or content-free answer (JSON with no goal and no entries, e.g. `{}`) throws: the session
 * records `compaction.failed`, memory stays, and `compactAbove` tries again at the next step.
 * @example new LlmCompactPolicy(client, 'gpt-4.1', 10, { compactAbove: 30 })
 */
export class LlmCompactPolicy implements CompactPolicy {
  readonly compactAbove: number;
  readonly maxSummaryChars: number;
  readonly maxItemChars: number;
  readonly systemPrompt: string;
  readonly compactAboveTokens: number | undefined;
  readonly keepTokens: number | undefined;
  readonly retainUserMessages: RetainUserMessages | undefined;
  readonly summarizerMaxTokens: number | undefined;

  constructor(
    readonly modelClient: ModelClient,
    readonly model: string,
    readonly maxItems: number,
    options: LlmCompactOptions = {},
  ) {
    parseOptions(LlmCompactPolicyArgsSchema, { modelClient, model, maxItems, options }, 'LlmCompactPolicy');
    this.compactAbove = options.compactAbove ?? maxItems;
    this.maxSummaryChars = options.maxSummaryChars ?? DEFAULT_MAX_SUMMARY_CHARS;
    this.maxItemChars = options.maxItemChars ?? 2000;
    this.systemPrompt = options.systemPrompt ?? LLM_COMPACT_SYSTEM_PROMPT;
    this.compactAboveTokens = options.compactAboveTokens;
    this.keepTokens = options.keepTokens;
    this.retainUserMessages = options.retainUserMessages;
    this.summarizerMaxTokens = options.summarizerMaxTokens;
  }

  shouldCompact(snapshot: MemorySnapshot | null | undefined, context?: CompactContext): boolean {
    return this.compactTrigger(snapshot, context) !== undefined;
  }

  /** Items above `compactAbove`, or tokens / reported input tokens above `compactAboveTokens`. */
  compactTrigger(snapshot: MemorySnapshot | null | undefined, context?: CompactContext): CompactReason | undefined {
    return compactTriggerOf(
      { compactAbove: this.compactAbove, keepItems: this.maxItems, compactAboveTokens: this.compactAboveTokens, keepTokens: this.keepTokens },
      snapshot,
      context,
    );
  }

  /** Where memory is cut, and whether the one-request rule moved it (see {@link compactionCut}). */
  cutFor(items: readonly MemoryItem[], tokenizer: Tokenizer = approxTokenizer): { cut: number; request?: string } {
    return compactionCut(items, { maxItems: this.maxItems, keepTokens: this.keepTokens, compactAboveTokens: this.compactAboveTokens, retainsUserMessages: this.retainUserMessages !== undefined }, tokenizer);
  }

  buildPrompt(
    summarised: readonly MemoryItem[],
    snapshot: MemorySnapshot,
    readFiles: readonly string[],
    modifiedFiles: readonly string[],
    request?: string,
    maxItemChars: number = this.maxItemChars,
    instructions?: string,
  ): string {
    const parts = [
      'Summarise the items below. Answer with one JSON object with exactly these keys:',
      '{"goal": string, "completed": string[], "pending": string[], "decisions": string[], "errors": string[], "testResults": string[], "openQuestions": string[]}',
      'Carry forward from the previous summary its goal, and every pending item, decision, error and open question that is still unresolved.',
    ];
    if (instructions !== undefined && instructions.trim() !== '') parts.push('', 'Focus of this summary (from the agent or its host):', clipWithCount(instructions, this.maxSummaryChars));
    if (snapshot.summary?.trim()) parts.push('', 'Previous summary:', keepNewestChars(snapshot.summary, this.maxSummaryChars));
    if (request !== undefined) parts.push('', 'The session is one request; it is the goal:', clipWithCount(request, this.maxSummaryChars));
    if (readFiles.length) parts.push('', `Files read: ${readFiles.join(', ')}`);
    if (modifiedFiles.length) parts.push('', `Files modified: ${modifiedFiles.join(', ')}`);
    parts.push('', `Items to summarise (${summarised.length}):`);
    summarised.forEach((item, i) => parts.push(`[${i + 1}] ${describeItem(item, maxItemChars)}`));
    return parts.join('\n');
  }

  /** Asks the summarizer once; the answer's text, or a throw for an empty or content-free answer. */
  async #ask(request: ModelRequest, signal: AbortSignal | undefined): Promise<{ rawAnswer: string; usage?: Record<string, unknown> }> {
    // The run's signal reaches the summarizer; one that ignores it is not waited for.
    const answer = await untilAborted(
      Promise.resolve().then(() => this.modelClient.create(request, signal ? { signal } : undefined)),
      signal,
      'the summarizer model call',
    );
    const answerItems: readonly MemoryItem[] = Array.isArray(answer?.items) ? answer.items : [];
    const lastAssistant = lastAssistantMessage(answerItems);
    const outputText: unknown = answer?.outputText;
    const rawAnswer = (typeof outputText === 'string' ? outputText : lastAssistant ? textOf(lastAssistant) : '').trim();
    if (rawAnswer === '') throw new EmptySummaryError('LlmCompactPolicy');
    const parsed = parseSummaryAnswer(rawAnswer);
    if (isContentFree(rawAnswer) || (parsed && renderSummary(parsed) === '')) {
      // `null`, `[]`, `""`, `{}`, zero-width spaces, keys we did not ask for: applying it would replace the old items with nothing.
      throw new EmptySummaryError('LlmCompactPolicy', `the model's summary has no content (${clipWithCount(rawAnswer, 200)})`);
    }
    const usage: unknown = answer?.usage;
    return isUsageRecord(usage) ? { rawAnswer, usage } : { rawAnswer };
  }

  /**
   * The items in consecutive chunks whose prompts fit `maxTokens` (one chunk when there is no bound), the prompt's fixed
   * part (`fixed` tokens: instructions, the carried summary, file lists, the system prompt) counted in each. The items
   * get at least half the bound whatever the fixed part takes, so the number of chunks stays bounded by the items' size.
   */
  #chunks(summarised: readonly MemoryItem[], fixed: number, maxTokens: number | undefined, maxItemChars: number, tokenizer: Tokenizer): MemoryItem[][] {
    if (maxTokens === undefined) return [[...summarised]];
    const room = Math.max(maxTokens - fixed, Math.ceil(maxTokens / 2));
    const chunks: MemoryItem[][] = [];
    let current: MemoryItem[] = [];
    let used = 0;
    for (const item of summarised) {
      const cost = tokenizer.count(describeItem(item, maxItemChars)) + 4;
      if (current.length > 0 && used + cost > room) {
        chunks.push(current);
        current = [];
        used = 0;
      }
      current.push(item);
      used += cost;
    }
    if (current.length > 0) chunks.push(current);
    return chunks;
  }

  /**
   * Summarises `summarised` in chunks that fit `summarizerMaxTokens`, each chunk's prompt carrying the previous
   * chunk's summary, cut (newest text kept) so that the prompt's fixed part leaves at least half the bound for items
   * (never below an eighth of the bound); the items get at least half the bound in every chunk. A request the summarizer refuses as too long is retried (up to 3 times) with each item cut to half
   * as many characters and half the token bound. Every call is returned, in order, for the record.
   */
  async #summarise(
    summarised: readonly MemoryItem[],
    snapshot: MemorySnapshot,
    files: { readonly read: readonly string[]; readonly modified: readonly string[] },
    request: string | undefined,
    tokenizer: Tokenizer,
    signal: AbortSignal | undefined,
    instructions?: string,
  ): Promise<{ rawAnswer: string; calls: SummarizerCall[]; usage?: Record<string, unknown> }> {
    const calls: SummarizerCall[] = [];
    const usages: Record<string, unknown>[] = [];
    let maxTokens = this.summarizerMaxTokens;
    let maxItemChars = this.maxItemChars;
    const overflows: string[] = [];
    for (let attempt = 0; ; attempt++) {
      let body: ModelRequest | undefined;
      try {
        // With a bound, the summary carried into each chunk's prompt is cut (newest text kept) so that the prompt's fixed
        // part leaves at least half the bound for items: a long previous summary must not leave one item per call.
        const prompt = (items: readonly MemoryItem[], summary: string | null): string => this.buildPrompt(items, { ...snapshot, summary }, files.read, files.modified, request, maxItemChars, instructions);
        const overhead = tokenizer.count(this.systemPrompt) + 16;
        const withoutSummary = tokenizer.count(prompt([], null)) + overhead;
        const summaryTokens = maxTokens === undefined ? undefined : carriedSummaryTokens(maxTokens, withoutSummary);
        const carried = (summary: string | null): string | null => (summaryTokens === undefined || summary === null ? summary : newestWithinTokens(summary, Math.min(summary.length, this.maxSummaryChars), summaryTokens, tokenizer));
        let previous = snapshot?.summary ?? null;
        const fixed = tokenizer.count(prompt([], carried(previous))) + overhead;
        const chunks = this.#chunks(summarised, fixed, maxTokens, maxItemChars, tokenizer);
        let rawAnswer = '';
        for (const chunk of chunks) {
          body = {
            model: this.model,
            systemPrompt: this.systemPrompt,
            items: [userMessage(prompt(chunk, carried(previous)))],
          };
          const answer = await this.#ask(body, signal);
          calls.push({ request: body, rawAnswer: answer.rawAnswer, ...(answer.usage ? { usage: answer.usage } : {}) });
          if (isUsageRecord(answer.usage)) usages.push(answer.usage);
          rawAnswer = answer.rawAnswer;
          const parsed = parseSummaryAnswer(rawAnswer);
          previous = parsed ? renderSummary(parsed) : rawAnswer;
        }
        const usage = usages.length === 1 ? usages[0] : usages.length > 1 ? summedUsage(usages) : undefined;
        return usage !== undefined ? { rawAnswer, calls, usage } : { rawAnswer, calls };
      } catch (error) {
        if (!ContextOverflowError.isInstance(error)) throw error;
        const sent = body ? tokenizer.count(textOf(body.items[0])) : 0;
        calls.push({
          ...(body ? { request: body } : {}),
          error: error.message,
          overflow: true,
          ...(error.requestTokens !== undefined ? { requestTokens: error.requestTokens } : {}),
          ...(error.limitTokens !== undefined ? { limitTokens: error.limitTokens } : {}),
        });
        overflows.push(error.message);
        if (attempt >= SUMMARIZER_OVERFLOW_RETRIES) throw new SummarizerOverflowError('LlmCompactPolicy', overflows);
        maxItemChars = Math.max(100, Math.floor(maxItemChars / 2));
        const bound = Math.min(maxTokens ?? Infinity, error.limitTokens !== undefined ? Math.floor(error.limitTokens * 0.8) : Infinity, sent > 0 ? sent : Infinity);
        maxTokens = Math.max(256, Math.floor((Number.isFinite(bound) ? bound : 4096) / 2));
      }
    }
  }

  async compact(snapshot: MemorySnapshot, options: CompactOptions = {}): Promise<CompactResult> {
    const items = snapshot?.items ?? [];
    const tokenizer = options.tokenizer ?? approxTokenizer;
    const facts = factLists(snapshot?.facts);
    const carriedRead = [...(snapshot?.readFiles ?? [])];
    const carriedModified = [...(snapshot?.modifiedFiles ?? [])];
    const { cut, request } = this.cutFor(items, tokenizer);
    if (cut <= 0) {
      // Nothing to summarise: no model call, memory unchanged.
      return {
        ...emptyCompactLists(),
        ...facts,
        readFiles: carriedRead,
        modifiedFiles: carriedModified,
        summary: snapshot?.summary ?? null,
        memory: { items: [...items], summary: snapshot?.summary ?? null },
      };
    }
    const summarised = items.slice(0, cut);
    const retained = retainedUserMessages(summarised, this.retainUserMessages);
    const readFiles = uniqueStrings(carriedRead, extractFileOperations(summarised, true));
    const modifiedFiles = uniqueStrings(carriedModified, extractFileOperations(summarised, false));
    const { rawAnswer, calls, usage } = await this.#summarise(summarised, snapshot, { read: readFiles, modified: modifiedFiles }, request, tokenizer, options.signal, options.instructions);
    const parsed = parseSummaryAnswer(rawAnswer);
    const structured: StructuredSummary | undefined =
      parsed && request !== undefined ? { ...parsed, goal: clipWithCount(request, this.maxSummaryChars) } : parsed;
    const rendered = structured
      ? renderSummary(structured)
      : request !== undefined
        ? `## Goal\n${clipWithCount(request, this.maxSummaryChars)}\n\n${rawAnswer}`
        : rawAnswer;
    const summary = options.recallTool !== undefined ? `${rendered}\n\n${recallHintLine(options.recallTool)}` : rendered;
    return {
      ...emptyCompactLists(),
      ...facts,
      ...(structured?.goal !== undefined ? { goal: structured.goal } : request !== undefined ? { goal: request } : {}),
      completed: structured?.completed ?? [],
      pending: structured?.pending ?? [],
      decisions: structured?.decisions ?? [],
      failedCommands: uniqueStrings(structured?.errors ?? [], facts.failedCommands),
      testResults: uniqueStrings(structured?.testResults ?? [], facts.testResults),
      openQuestions: structured?.openQuestions ?? [],
      readFiles,
      modifiedFiles,
      summary,
      memory: { items: [...retained, ...items.slice(cut)], summary },
      // One call: its request as before; several (chunks, overflow retries): every call in order.
      summarizer: calls.length === 1 && 'rawAnswer' in calls[0]! ? { request: calls[0].request, rawAnswer } : { request: { calls }, rawAnswer },
      ...(usage ? { usage } : {}),
    };
  }

  describe(): ComponentDescription {
    return {
      name: 'LlmCompactPolicy',
      settings: {
        model: this.model,
        maxItems: this.maxItems,
        compactAbove: this.compactAbove,
        maxSummaryChars: this.maxSummaryChars,
        maxItemChars: this.maxItemChars,
        systemPrompt: this.systemPrompt,
        ...(this.compactAboveTokens !== undefined ? { compactAboveTokens: this.compactAboveTokens, retainsUserMessages: this.retainUserMessages !== undefined } : {}),
        ...(this.keepTokens !== undefined ? { keepTokens: this.keepTokens } : {}),
        ...(this.retainUserMessages !== undefined ? { retainUserMessages: this.retainUserMessages } : {}),
        ...(this.summarizerMaxTokens !== undefined ? { summarizerMaxTokens: this.summarizerMaxTokens } : {}),
      },
    };
  }
}

/** One summarizer call of a compaction: its answer, or the overflow it was refused with (then retried with less). */
export type SummarizerCall =
  | { readonly request: ModelRequest; readonly rawAnswer: string; readonly usage?: Record<string, unknown> }
  | { readonly request?: ModelRequest; readonly error: string; readonly overflow: true; readonly requestTokens?: number; readonly limitTokens?: number };
