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
import { untilAborted, type ModelClient, type ModelRequest } from '../model/index.js';
import { EmptySummaryError } from './errors.js';
import { factLists } from './facts.js';
import { extractFileOperations } from './file-tracking.js';
import { parseSummaryAnswer, renderSummary, type StructuredSummary } from './summary-format.js';
import { DEFAULT_MAX_SUMMARY_CHARS, keepNewestChars } from './text.js';
import { findStepBoundaryCut, findTurnBoundaryCut } from './turn-boundary.js';
import { emptyCompactLists, uniqueStrings } from '../events/index.js';
import { parseOptions } from '../events/options.js';
import { LlmCompactPolicyArgsSchema } from './options.js';
import { recallHintLine, type CompactOptions, type CompactPolicy, type CompactResult } from './types.js';

export interface LlmCompactOptions {
  /** Compact when items exceed this (default: maxItems). E.g. keep 10, compact above 30. */
  readonly compactAbove?: number;
  /** The previous summary fed back to the model is cut to this many characters, oldest first (default 4,000). */
  readonly maxSummaryChars?: number;
  /** Each item's text in the prompt is cut to this many characters (default 2,000). */
  readonly maxItemChars?: number;
  readonly systemPrompt?: string;
}

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
  }

  shouldCompact(snapshot: MemorySnapshot | null | undefined): boolean {
    return !!snapshot && snapshot.items.length > this.compactAbove;
  }

  /** Where memory is cut, and whether the one-request rule moved it. */
  cutFor(items: readonly MemoryItem[]): { cut: number; request?: string } {
    const naive = items.length - this.maxItems;
    if (naive <= 0) return { cut: 0 };
    const cut = findTurnBoundaryCut(items, naive);
    const first = items.findIndex((item) => isUserMessage(item));
    // The cut walked back to the session's opening request (with nothing but system text before it):
    // a session that is one request and many steps. Cut at a step boundary instead.
    const atOpeningRequest = cut === 0 || (cut === first && items.slice(0, cut).every((i) => isMessage(i) && (i.role === 'system' || i.role === 'developer')));
    if (!atOpeningRequest) return { cut };
    const step = findStepBoundaryCut(items, naive);
    if (step <= first) return { cut: cut > 0 ? cut : 0 };
    const request = first >= 0 && first < step ? textOf(items[first]!) : undefined;
    return request !== undefined ? { cut: step, request } : { cut: step };
  }

  buildPrompt(
    summarised: readonly MemoryItem[],
    snapshot: MemorySnapshot,
    readFiles: readonly string[],
    modifiedFiles: readonly string[],
    request?: string,
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
    summarised.forEach((item, i) => parts.push(`[${i + 1}] ${describeItem(item, this.maxItemChars)}`));
    return parts.join('\n');
  }

  async compact(snapshot: MemorySnapshot, options: CompactOptions = {}): Promise<CompactResult> {
    const items = snapshot?.items ?? [];
    const facts = factLists(snapshot?.facts);
    const carriedRead = [...(snapshot?.readFiles ?? [])];
    const carriedModified = [...(snapshot?.modifiedFiles ?? [])];
    const { cut, request } = this.cutFor(items);
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
    const readFiles = uniqueStrings(carriedRead, extractFileOperations(summarised, true));
    const modifiedFiles = uniqueStrings(carriedModified, extractFileOperations(summarised, false));
    const requestBody: ModelRequest = {
      model: this.model,
      systemPrompt: this.systemPrompt,
      items: [userMessage(this.buildPrompt(summarised, snapshot, readFiles, modifiedFiles, request, options.instructions))],
    };
    const { signal } = options;
    // The run's signal reaches the summarizer; one that ignores it is not waited for.
    const answer = await untilAborted(
      Promise.resolve().then(() => this.modelClient.create(requestBody, signal ? { signal } : undefined)),
      signal,
      'the summarizer model call',
    );
    const answerItems: readonly MemoryItem[] = Array.isArray(answer?.items) ? answer.items : [];
    const lastAssistant = lastAssistantMessage(answerItems);
    const outputText: unknown = answer?.outputText;
    const rawAnswer = (typeof outputText === 'string' ? outputText : lastAssistant ? textOf(lastAssistant) : '').trim();
    if (rawAnswer === '') throw new EmptySummaryError('LlmCompactPolicy');
    const parsed = parseSummaryAnswer(rawAnswer);
    if (parsed && renderSummary(parsed) === '') {
      // `{}`, `{"goal": null}`, keys we did not ask for: applying it would replace the old items and summary with nothing.
      throw new EmptySummaryError('LlmCompactPolicy', `the model's summary has no content (${clipWithCount(rawAnswer, 200)})`);
    }
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
      memory: { items: items.slice(cut), summary },
      summarizer: { request: requestBody, rawAnswer },
      ...(isUsageRecord(answer?.usage) ? { usage: answer.usage } : {}),
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
      },
    };
  }
}
