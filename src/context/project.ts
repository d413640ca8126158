// projectContext: tiers, limits and pairing over a list of items, with the report of what was kept and why.
import type { ContextReport, FateRule, ItemFate } from '../events/index.js';
import { FATES, FATE_RULES } from '../events/fate-names.js';
import { encodeFateCodes, encodeReportFates, fateCode } from '../events/fate-runs.js';
import { isUserMessage } from '../items/index.js';
import type { MemoryItem } from '../items/index.js';
import { normalizeBudget } from './budget.js';
import type { ContextBudget } from './budget.js';
import { KnownCosts, LazyTokenCosts } from './measure/costs.js';
import type { BlockFloors, CostSource } from './measure/costs.js';
import { historyOf } from './history.js';
import type { History } from './history.js';
import { registerProjectionCache } from './caches.js';
import { hasBpeLowerBound, itemApproxChars, itemTokenCounter, itemTokenLowerBoundWithin, itemTokenMemo } from './measure/items.js';
import { DROP_RULES, selectItems } from './select.js';
import type { Selection } from './select.js';
import { MARK_CLEARED, MARK_SHORT, MARK_TRIMMED, clearOldToolResults, tier1Notes, trimOldReasoning } from './tiers.js';
import { approxTokenizer } from './measure/tokenizer.js';
import type { Tokenizer } from './measure/tokenizer.js';

/**
 * What the model is sent this turn, and the report of what was kept, rewritten and dropped.
 * @example const { items, report } = projector.project(memory.getItems(), budget);
 */
export interface ContextProjection {
  readonly items: readonly MemoryItem[];
  readonly report: ContextReport;
}

export interface ProjectContextOptions {
  /** Counts tokens for `maxTokens` and the report (default {@link approxTokenizer}). */
  readonly tokenizer?: Tokenizer;
  /** Run Tier-1 and Tier-2 when the budget asks for them (TypeAwareContextProjector). Default false. */
  readonly tiers?: boolean;
  /**
   * Tier-1 as recorded before its rules changed: the note gives the configured `maxRecentToolResults`, and a result
   * shorter than its placeholder is cleared too. Only for replaying such recordings. Default false.
   */
  readonly legacyTier1?: boolean;
}

// Fates are interned: one frozen object per (index, fate, rule) for indices below INTERNED_FATES, shared by
// every report, so projecting a long history allocates one array of fates rather than an object per item.
const INTERNED_FATES = 1 << 17;
type FateTable = Array<ItemFate | undefined>;
const fateOf = (table: FateTable, index: number, fate: ItemFate['fate'], rule: FateRule): ItemFate => {
  if (index >= INTERNED_FATES) return { index, fate, rule };
  let interned = table[index];
  if (interned === undefined) {
    // Keep the table a dense array (no holes): pad with undefined up to the index.
    while (table.length < index) table.push(undefined);
    interned = Object.freeze({ index, fate, rule });
    table[index] = interned;
  }
  return interned;
};
/** The interned fates of each fate code (fateCode). */
const FATE_TABLES: FateTable[] = [];
const RULE_COUNT = FATE_RULES.length;

// The fate code (fateCode of events/fate-runs) of each way an item ends.
const KEPT_TAIL = fateCode('kept', 'tail');
const KEPT_PINNED = fateCode('kept', 'pinned');
const KEPT_USER = fateCode('kept', 'user');
const KEPT_SHORT = fateCode('kept', 'tier1-short');
const CLEARED = fateCode('cleared', 'tier1');
const TRIMMED = fateCode('trimmed', 'tier2');
const DROPPED_BY = DROP_RULES.map((rule) => fateCode('dropped', rule ?? 'maxItems'));
const DROPPED_MAX_ITEMS = fateCode('dropped', 'maxItems');

// Whether a tool result's placeholder would not be smaller, per tokenizer and frozen result, with that placeholder.
let shortMemos = new WeakMap<Tokenizer, WeakMap<object, { readonly copy: MemoryItem; readonly short: boolean }>>();
registerProjectionCache('Tier-1 short-result decisions per tokenizer', () => {
  shortMemos = new WeakMap();
});
const shortMemoOf = (tokenizer: Tokenizer): WeakMap<object, { readonly copy: MemoryItem; readonly short: boolean }> => {
  let memo = shortMemos.get(tokenizer);
  if (!memo) shortMemos.set(tokenizer, (memo = new WeakMap()));
  return memo;
};

/** The character costs of a projection without a character limit: never asked (the limit is Infinity). */
const NO_CHARACTER_LIMIT: CostSource = new KnownCosts([], 0);

/** A user turn: a user message that does not carry tool results (Anthropic `tool_result` parts). */
const isUserTurn = (item: MemoryItem): boolean =>
  isUserMessage(item) && !(Array.isArray(item.content) && item.content.some((part) => part !== null && typeof part === 'object' && part.type === 'tool_result'));

/** The indices of the newest `count` user turns, newest first. */
const newestUserMessages = (items: readonly MemoryItem[], count: number): number[] => {
  const found: number[] = [];
  for (let i = items.length - 1; i >= 0 && found.length < count; i--) if (isUserTurn(items[i] as MemoryItem)) found.push(i);
  return found;
};

/** One fate code per source item, from what the selection kept and dropped and what the tiers rewrote. */
const fateCodesOf = (n: number, selection: Selection, rewritten: Uint8Array | undefined): Uint8Array => {
  const codes = new Uint8Array(n);
  const { kept, dropRules, pinnedEnd, users } = selection;
  for (let i = 0; i < n; i++) {
    if (kept[i] !== 1) {
      codes[i] = DROPPED_BY[dropRules[i] as number] ?? DROPPED_MAX_ITEMS;
      continue;
    }
    const mark = rewritten?.[i] ?? 0;
    codes[i] =
      mark === MARK_CLEARED
        ? CLEARED
        : mark === MARK_TRIMMED
          ? TRIMMED
          : i < pinnedEnd
            ? KEPT_PINNED
            : users?.[i] === 1
              ? KEPT_USER
              : mark === MARK_SHORT
                ? KEPT_SHORT
                : KEPT_TAIL;
  }
  return codes;
};

let fateListsMade = 0;
/** How many reports have made their fates (a list of one fate per item) in this process: a work count for tests. */
export const fateListsMadeCount = (): number => fateListsMade;

/** The fates of fate codes, in source order (interned objects). */
const fatesOfCodes = (codes: Uint8Array): ItemFate[] => {
  fateListsMade += 1;
  const n = codes.length;
  const fates: ItemFate[] = new Array<ItemFate>(n);
  let last = -1;
  let table: FateTable = [];
  let fate: ItemFate['fate'] = 'kept';
  let rule: FateRule = 'tail';
  for (let i = 0; i < n; i++) {
    const code = codes[i] as number;
    if (code !== last) {
      last = code;
      table = FATE_TABLES[code] ??= [];
      fate = FATES[Math.floor((code - 1) / RULE_COUNT)] as ItemFate['fate'];
      rule = FATE_RULES[(code - 1) % RULE_COUNT] as FateRule;
    }
    fates[i] = fateOf(table, i, fate, rule);
  }
  return fates;
};

/** The fate runs of each report a projection made (and of reports carried over by {@link withReportFields}), built from its fate codes without making its fates. */
const fateRunSources = new WeakMap<ContextReport, () => string>();

/**
 * `encodeReportFates(report.fates, sourceItemCount)`: what `context.projected.fateRuns` records. For a report a
 * projection made (and one {@link withReportFields} carried over) the runs come from the selection's own codes, and
 * no fate object or array is made.
 * @example reportFateRuns(projection.report, items.length) // 'dropped:maxTokens*9840 kept:tail*160'
 */
export const reportFateRuns = (report: ContextReport, sourceItemCount: number): string => {
  const own = fateRunSources.get(report);
  return own !== undefined && report.sourceItemCount === sourceItemCount ? own() : encodeReportFates(report.fates, sourceItemCount);
};

/** Whether `report.fates` are one per index in source order: always for a report a projection made; otherwise checked. */
export const reportFatesInSourceOrder = (report: ContextReport): boolean => {
  if (fateRunSources.has(report)) return true;
  const fates = report.fates;
  for (let i = 0; i < fates.length; i++) if ((fates[i] as ItemFate).index !== i) return false;
  return true;
};

/**
 * The report's fields but its fates (what `context.projected.report` records), read without computing the fates
 * (`const { fates, ...rest } = report` would read them).
 * @example reportWithoutFates(projection.report).sourceItemCount
 */
export const reportWithoutFates = (report: ContextReport): Omit<ContextReport, 'fates'> => {
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(report)) if (key !== 'fates') rest[key] = (report as unknown as Record<string, unknown>)[key];
  return rest as Omit<ContextReport, 'fates'>;
};

/**
 * `{ ...report, ...fields }` that keeps the report's lazily computed fields lazy (its fates, its source characters:
 * a spread would compute them) and, unless `fields` replaces the fates, its fate runs ({@link reportFateRuns}).
 * @example withReportFields(projection.report, { notes, overheadTokens })
 */
export const withReportFields = (report: ContextReport, fields: Partial<ContextReport>): ContextReport => {
  const derived = Object.defineProperties({}, Object.getOwnPropertyDescriptors(report)) as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    Object.defineProperty(derived, key, { value: (fields as Record<string, unknown>)[key], enumerable: true, writable: true, configurable: true });
  }
  const own = fateRunSources.get(report);
  if (own !== undefined && !('fates' in fields) && !('sourceItemCount' in fields)) fateRunSources.set(derived as unknown as ContextReport, own);
  return derived as unknown as ContextReport;
};

/**
 * Projects `items` under `budget`: Tier-1 and Tier-2 rewrites (when `tiers`), then maxItems, maxApproxChars and
 * maxTokens, keeping tool calls with their outputs. Pure and synchronous; never mutates `items`.
 * @example projectContext(memory.getItems(), { maxItems: 20, pinnedPrefixItems: 1 }).report.notes // ['maxItems applied: 20']
 */
export const projectContext = (
  items: readonly MemoryItem[],
  budget?: ContextBudget,
  options: ProjectContextOptions = {},
): ContextProjection => {
  const limits = normalizeBudget(budget);
  const tokenizer = options.tokenizer ?? approxTokenizer;
  const n = items.length;
  const notes: string[] = [];

  let working: readonly MemoryItem[] = items;
  let rewritten: Uint8Array | undefined;
  if (options.tiers === true && (limits.maxRecentToolResults !== undefined || limits.trimOldReasoning)) {
    const copy = items.slice();
    const marks = new Uint8Array(n);
    let changed = false;
    if (limits.maxRecentToolResults !== undefined) {
      const memo = itemTokenMemo(tokenizer);
      const bounded = hasBpeLowerBound(tokenizer);
      const legacy = options.legacyTier1 === true;
      const outcome = clearOldToolResults(items, copy, marks, {
        legacy,
        keep: limits.maxRecentToolResults,
        step: limits.evictionStep,
        keepToolResultsOf: limits.keepToolResultsOf,
        clearToolInputs: limits.clearToolInputs,
        clearAtLeastTokens: limits.clearAtLeastTokens,
        clearAboveTokens: limits.clearAboveTokens,
        chars: itemApproxChars,
        shortMemo: shortMemoOf(tokenizer),
        tokens: (item) => memo.exact(item),
        tokensWithin: (item, bound) => {
          if (bounded) {
            const lower = itemTokenLowerBoundWithin(item, bound);
            if (lower.value > bound) return lower.value;
          }
          return memo.within(item, bound);
        },
      });
      notes.push(...tier1Notes(outcome, limits, legacy));
      if (outcome.count > 0 || outcome.short > 0) changed = true;
    }
    if (limits.trimOldReasoning) {
      const { count } = trimOldReasoning(items, copy, marks);
      if (count > 0) {
        notes.push(`tier2 reasoning-trim: cleared ${count} reasoning item(s)`);
        changed = true;
      }
    }
    if (changed) {
      working = copy;
      rewritten = marks;
    }
  }

  const history = historyOf(items);
  // Characters of every item are measured (a JSON text each) only when a character limit needs them; otherwise the
  // report's sourceApproxChars is computed on first read (below), and projectedApproxChars from the items sent.
  const charLimit = Number.isFinite(limits.maxApproxChars);
  let chars: Float64Array | undefined;
  let charBlocks: BlockFloors | undefined;
  let workingChars = 0;
  let sourceApproxChars: number | undefined;
  if (charLimit) {
    const charColumn = history.charColumn();
    const sourceChars = charColumn.values.subarray(0, n);
    sourceApproxChars = charColumn.total;
    chars = sourceChars;
    charBlocks = charColumn.blocks;
    workingChars = sourceApproxChars;
    if (rewritten) {
      charBlocks = undefined;
      chars = sourceChars.slice();
      workingChars = 0;
      for (let i = 0; i < n; i++) {
        if (rewritten[i] === MARK_CLEARED || rewritten[i] === MARK_TRIMMED) chars[i] = itemApproxChars(working[i] as MemoryItem);
        workingChars += chars[i] as number;
      }
    }
  }

  // Tokens: counted up front when counting is free (approxTokenizer), otherwise lazily, as the limits ask.
  let tokens: CostSource;
  let sourceTokens: () => number | undefined;
  if (tokenizer === approxTokenizer) {
    const countTokens = itemTokenCounter(tokenizer);
    const tokenColumn = history.tokenColumn(tokenizer);
    let values = tokenColumn.values.subarray(0, n);
    let total = tokenColumn.total;
    if (rewritten) {
      values = values.slice();
      total = 0;
      for (let i = 0; i < n; i++) {
        if (rewritten[i] === MARK_CLEARED || rewritten[i] === MARK_TRIMMED) values[i] = countTokens(working[i] as MemoryItem);
        total += values[i] as number;
      }
    }
    tokens = new KnownCosts(values, total, rewritten ? undefined : tokenColumn.blocks);
    const sourceTotal = tokenColumn.total;
    sourceTokens = () => sourceTotal;
  } else {
    const lazy = new LazyTokenCosts(working, rewritten, history.tokenKnowledge(tokenizer), itemTokenMemo(tokenizer), hasBpeLowerBound(tokenizer));
    tokens = lazy;
    // Only when every source item's count is known from this projection's own work (never estimated).
    sourceTokens = () => (rewritten === undefined && lazy.allKnown() ? lazy.total() : undefined);
  }

  // With lazy counts of an OpenAI BPE encoding, the greedy sets old items aside by their shapes, read with the pairing.
  const paired = tokens instanceof LazyTokenCosts && tokens.bounded ? history.groupsWithShapes() : { groups: history.groups(), shapes: undefined };
  const selection = selectItems({
    count: n,
    groups: paired.groups,
    ...(paired.shapes !== undefined ? { shapes: paired.shapes } : {}),
    budget: limits,
    chars: chars ? new KnownCosts(chars, workingChars, charBlocks) : NO_CHARACTER_LIMIT,
    tokens,
    ...(limits.keepUserMessages > 0 ? { users: newestUserMessages(items, limits.keepUserMessages) } : {}),
  });
  if (selection.itemLimitApplied) notes.push(`maxItems applied: ${limits.maxItems}`);
  if (selection.characterLimitApplied) notes.push(`maxApproxChars applied: ${limits.maxApproxChars}`);
  if (selection.tokenLimitApplied) notes.push(`maxTokens applied: ${limits.maxTokens}`);

  const projected: MemoryItem[] = [];
  let projectedApproxChars = 0;
  let projectedTokens = 0;
  // The kept items found with the engine's search (indexOf) rather than a loop over every item of a long history.
  const kept = selection.kept;
  for (let i = kept.indexOf(1); i !== -1; i = kept.indexOf(1, i + 1)) {
    projected.push(working[i] as MemoryItem);
    projectedApproxChars += chars ? (chars[i] as number) : itemApproxChars(working[i] as MemoryItem);
    projectedTokens += tokens.exact(i);
  }
  const pairingDrops = selection.pairingDrops;
  if (pairingDrops > 0) notes.push(`pairing: dropped ${pairingDrops} item(s) to keep tool calls with their results`);
  const sourceTokenCount = sourceTokens();

  // The fates, one per source item, made on first read (once): most of a long history is one run of drops, and a
  // caller that records them as runs need not have an object made per item first.
  let codes: Uint8Array | undefined;
  const codesOnce = (): Uint8Array => (codes ??= fateCodesOf(n, selection, rewritten));
  let fates: ItemFate[] | undefined;
  const fatesOnce = (): ItemFate[] => (fates ??= fatesOfCodes(codesOnce()));
  let runs: string | undefined;

  // sourceApproxChars, when no character limit measured it, on first read (once; exact, from the same memo).
  let measured: History | undefined = history;
  const sourceCharsOnce = (): number => {
    if (sourceApproxChars === undefined && measured !== undefined) {
      sourceApproxChars = measured.charTotal(n);
      measured = undefined;
    }
    return sourceApproxChars as number;
  };

  const report: ContextReport = {
    sourceItemCount: n,
      projectedItemCount: projected.length,
      droppedItemCount: n - projected.length,
      get sourceApproxChars() {
        return sourceCharsOnce();
      },
      projectedApproxChars,
      itemLimitApplied: selection.itemLimitApplied,
      characterLimitApplied: selection.characterLimitApplied,
      notes,
      ...(sourceTokenCount === undefined ? {} : { sourceTokens: sourceTokenCount }),
      projectedTokens,
      tokenLimitApplied: selection.tokenLimitApplied,
      get fates() {
        return fatesOnce();
      },
  };
  fateRunSources.set(report, () => (runs ??= encodeFateCodes(codesOnce())));
  return { items: projected, report };
};
