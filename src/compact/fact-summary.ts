// FactSummaryCompactPolicy: a deterministic summary (no model) of the user's requests, files, failures, tests, approvals and artifacts.
import { approxTokenizer } from '../context/index.js';
import { emptyCompactLists, type ComponentDescription, type MemorySnapshot } from '../events/index.js';
import { oneLine, uniqueStrings } from '../base/index.js';
import { parseOptions } from '../base/options.js';
import {
  isFunctionCall,
  isFunctionCallOutput,
  isMessage,
  isUserMessage,
  textOf,
  toolCallArguments,
  toolCallName,
  type MemoryItem,
} from '../items/index.js';
import { compactionCut } from './cut.js';
import { factLists } from './facts.js';
import { extractFileOperations } from './file-tracking.js';
import { FactSummaryOptionsSchema } from './options.js';
import { retainedUserMessages, type RetainUserMessages } from './retain.js';
import { DEFAULT_MAX_SUMMARY_CHARS } from './text.js';
import { compactTriggerOf } from './trigger.js';
import { isRecallHintLine, recallHintLine, type CompactContext, type CompactOptions, type CompactPolicy, type CompactReason, type CompactResult } from './types.js';

export interface FactSummaryOptions {
  /** Keep the newest this many items (at a user turn or step boundary, never splitting a pair). */
  readonly maxItems?: number;
  /** Compact when items exceed this (default: maxItems). */
  readonly compactAbove?: number;
  /** Compact when memory's tokens, or the provider's reported input tokens, exceed this. */
  readonly compactAboveTokens?: number;
  /** Keep at most this many of the newest tokens. */
  readonly keepTokens?: number;
  /** Keep the user's messages of the compacted span as items (`{ maxChars }`: the newest within that many characters). */
  readonly retainUserMessages?: RetainUserMessages;
  /** The whole summary is kept within this many characters, oldest entries dropped first (default 4,000). */
  readonly maxSummaryChars?: number;
  /** Each user request (and the goal) is cut to this many characters (default 500). */
  readonly maxRequestChars?: number;
  /** Each section keeps its newest this many entries (default 20). */
  readonly maxEntries?: number;
}

/** The sections, in the order they are rendered. */
export const FACT_SUMMARY_SECTIONS = [
  'Goal',
  'User requests',
  'Files read',
  'Files modified',
  'Failed commands',
  'Test results',
  'Approvals',
  'Artifacts',
  'Unresolved tool errors',
] as const;

type Sections = Map<string, string[]>;

const EARLIER = 'Earlier summary';

/** A previous summary's sections (`## Heading` then `- entry` lines); text outside any heading is `Earlier summary`. */
const parseSections = (summary: string | null | undefined): Sections => {
  const sections: Sections = new Map();
  if (!summary?.trim()) return sections;
  let heading = EARLIER;
  for (const raw of summary.split('\n')) {
    const line = raw.trim();
    const head = /^##\s+(.+)$/.exec(line);
    if (head) {
      heading = head[1]!.trim();
      if (!sections.has(heading)) sections.set(heading, []);
      continue;
    }
    if (line === '' || isRecallHintLine(line)) continue;
    const entry = line.replace(/^[-*]\s+/, '');
    const list = sections.get(heading) ?? [];
    list.push(entry);
    sections.set(heading, list);
  }
  return sections;
};

/** The suite a test-result line is about (`passed: unit (3 passed)` → `unit`). */
const suiteOf = (line: string): string => /^[a-z]+:\s*(.*?)(?:\s+\(|\s+—|$)/.exec(line)?.[1] ?? line;

/** The newest result per suite, in the order of their newest result. */
const latestPerSuite = (lines: readonly string[]): string[] => {
  const last = new Map<string, string>();
  for (const line of lines) {
    const suite = suiteOf(line);
    last.delete(suite);
    last.set(suite, line);
  }
  return [...last.values()];
};

const isErrorOutput = (output: string): boolean => /^(error|exception|traceback|fatal)\b/i.test(output.trim());

/** `name(args)` of every tool call in the items, by call id. */
const callsById = (items: readonly MemoryItem[]): Map<string, string> => {
  const calls = new Map<string, string>();
  for (const item of items) {
    if (isFunctionCall(item)) calls.set(item.call_id, `${item.name}(${oneLine(item.arguments, 120)})`);
    else if (isMessage(item)) for (const call of item.tool_calls ?? []) calls.set(call.id, `${toolCallName(call) ?? '?'}(${oneLine(toolCallArguments(call), 120)})`);
  }
  return calls;
};

/** Tool calls whose error result no later result of the same call (same tool, same arguments) fixed. */
const unresolvedToolErrors = (items: readonly MemoryItem[], previous: readonly string[]): string[] => {
  const calls = callsById(items);
  const open = new Map<string, string>();
  for (const entry of previous) {
    const key = entry.slice(0, entry.indexOf('): ') + 1);
    if (key) open.set(key, entry);
  }
  for (const item of items) {
    if (!isFunctionCallOutput(item)) continue;
    const key = calls.get(item.call_id);
    if (key === undefined) continue;
    open.delete(key);
    if (isErrorOutput(item.output)) open.set(key, `${key}: ${oneLine(item.output, 200)}`);
  }
  return [...open.values()];
};

const bounded = (list: readonly string[], max: number): string[] => (list.length > max ? list.slice(list.length - max) : [...list]);

const render = (sections: Sections): string => {
  const parts: string[] = [];
  for (const [heading, entries] of sections) {
    if (entries.length === 0) continue;
    parts.push(heading === 'Goal' ? `## Goal\n${entries[0]}` : `## ${heading}\n${entries.map((e) => `- ${e}`).join('\n')}`);
  }
  return parts.join('\n\n');
};

/** Drops the oldest entry of the longest list (the goal last, then cut) until the summary fits `max` characters. */
const fit = (sections: Sections, max: number): string => {
  let text = render(sections);
  while (text.length > max) {
    let longest: string[] | undefined;
    let longestChars = 0;
    for (const [heading, entries] of sections) {
      if (heading === 'Goal' || entries.length === 0) continue;
      const chars = entries.reduce((n, e) => n + e.length + 3, 0);
      if (chars > longestChars) {
        longest = entries;
        longestChars = chars;
      }
    }
    if (!longest) {
      const goal = sections.get('Goal');
      if (goal?.[0]) goal[0] = oneLine(goal[0], Math.max(1, goal[0].length - (text.length - max)));
      text = render(sections);
      return text.length > max ? text.slice(0, max) : text;
    }
    longest.shift();
    text = render(sections);
  }
  return text;
};

/**
 * Compacts without a model: keeps the newest items (like {@link LlmCompactPolicy}'s cut) and writes the summary from
 * what was compacted and the facts the log recorded, in sections `## Goal` (the first request), `## User requests`
 * (verbatim, one line each), `## Files read`, `## Files modified`, `## Failed commands`, `## Test results` (the latest
 * per suite), `## Approvals`, `## Artifacts`, `## Unresolved tool errors`. A previous summary's sections merge in
 * (entries de-duplicated, never nested; text that is not in sections is kept under `## Earlier summary`), and the
 * whole stays within `maxSummaryChars`, oldest entries first out. With `options.recallTool` (the agent has a recall
 * tool) the summary ends with {@link recallHintLine}, within the bound too.
 * @example new FactSummaryCompactPolicy({ maxItems: 20, compactAboveTokens: 60_000, keepTokens: 20_000, retainUserMessages: true })
 */
export class FactSummaryCompactPolicy implements CompactPolicy {
  readonly maxItems: number | undefined;
  readonly compactAbove: number | undefined;
  readonly compactAboveTokens: number | undefined;
  readonly keepTokens: number | undefined;
  readonly retainUserMessages: RetainUserMessages | undefined;
  readonly maxSummaryChars: number;
  readonly maxRequestChars: number;
  readonly maxEntries: number;

  constructor(options: FactSummaryOptions) {
    parseOptions(FactSummaryOptionsSchema, options, 'FactSummaryCompactPolicy');
    this.maxItems = options.maxItems;
    this.compactAbove = options.compactAbove ?? options.maxItems;
    this.compactAboveTokens = options.compactAboveTokens;
    this.keepTokens = options.keepTokens;
    this.retainUserMessages = options.retainUserMessages;
    this.maxSummaryChars = options.maxSummaryChars ?? DEFAULT_MAX_SUMMARY_CHARS;
    this.maxRequestChars = options.maxRequestChars ?? 500;
    this.maxEntries = options.maxEntries ?? 20;
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

  compact(snapshot: MemorySnapshot, options: CompactOptions = {}): CompactResult {
    const items = snapshot?.items ?? [];
    const facts = factLists(snapshot?.facts);
    const { cut } = compactionCut(items, { maxItems: this.maxItems, keepTokens: this.keepTokens, compactAboveTokens: this.compactAboveTokens, retainsUserMessages: this.retainUserMessages !== undefined }, options.tokenizer ?? approxTokenizer);
    const carriedRead = [...(snapshot?.readFiles ?? [])];
    const carriedModified = [...(snapshot?.modifiedFiles ?? [])];
    if (cut <= 0) {
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
    const retainedSet = new Set(retained);
    const readFiles = uniqueStrings(carriedRead, extractFileOperations(summarised, true));
    const modifiedFiles = uniqueStrings(carriedModified, extractFileOperations(summarised, false));
    const previous = parseSections(snapshot?.summary);
    const merged = (heading: string, fresh: readonly string[]): string[] => bounded(uniqueStrings(previous.get(heading), fresh), this.maxEntries);
    const requests = summarised.filter((item) => isUserMessage(item) && textOf(item).trim() !== '');
    const firstRequest = requests[0] ?? retained[0];
    const goal = previous.get('Goal')?.[0] ?? (firstRequest ? oneLine(textOf(firstRequest), this.maxRequestChars) : undefined);
    const sections: Sections = new Map<string, string[]>([
      ['Goal', goal !== undefined && goal !== '' ? [goal] : []],
      ['User requests', merged('User requests', requests.filter((r) => !retainedSet.has(r)).map((r) => oneLine(textOf(r), this.maxRequestChars)))],
      ['Files read', merged('Files read', readFiles)],
      ['Files modified', merged('Files modified', modifiedFiles)],
      ['Failed commands', merged('Failed commands', facts.failedCommands)],
      ['Test results', bounded(latestPerSuite([...(previous.get('Test results') ?? []), ...facts.testResults]), this.maxEntries)],
      ['Approvals', merged('Approvals', facts.userConfirmations)],
      ['Artifacts', merged('Artifacts', facts.changedArtifacts)],
      ['Unresolved tool errors', bounded(unresolvedToolErrors(items, previous.get('Unresolved tool errors') ?? []), this.maxEntries)],
    ]);
    // Sections of a previous summary that are not ours (another policy's, or free text) are carried, de-duplicated.
    for (const [heading, entries] of previous) if (!sections.has(heading)) sections.set(heading, bounded(uniqueStrings(entries), this.maxEntries));
    // the recall hint (when the agent can recall) is the last line, inside the bound; a later compaction leaves it out of the sections
    const hint = options.recallTool !== undefined ? recallHintLine(options.recallTool) : undefined;
    const fitted = fit(sections, hint === undefined ? this.maxSummaryChars : Math.max(1, this.maxSummaryChars - hint.length - 2));
    const summary = fitted !== '' && hint !== undefined && fitted.length + hint.length + 2 <= this.maxSummaryChars ? `${fitted}\n\n${hint}` : fitted;
    return {
      ...emptyCompactLists(),
      ...facts,
      ...(goal !== undefined && goal !== '' ? { goal } : {}),
      readFiles,
      modifiedFiles,
      summary: summary === '' ? (snapshot?.summary ?? null) : summary,
      memory: { items: [...retained, ...items.slice(cut)], summary: summary === '' ? (snapshot?.summary ?? null) : summary },
    };
  }

  describe(): ComponentDescription {
    return {
      name: 'FactSummaryCompactPolicy',
      settings: {
        ...(this.maxItems !== undefined ? { maxItems: this.maxItems } : {}),
        ...(this.compactAbove !== undefined ? { compactAbove: this.compactAbove } : {}),
        ...(this.compactAboveTokens !== undefined ? { compactAboveTokens: this.compactAboveTokens, retainsUserMessages: this.retainUserMessages !== undefined } : {}),
        ...(this.keepTokens !== undefined ? { keepTokens: this.keepTokens } : {}),
        ...(this.retainUserMessages !== undefined ? { retainUserMessages: this.retainUserMessages } : {}),
        maxSummaryChars: this.maxSummaryChars,
        maxRequestChars: this.maxRequestChars,
        maxEntries: this.maxEntries,
      },
    };
  }
}
