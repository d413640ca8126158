// Where a summarising policy cuts memory: the newest maxItems / keepTokens, at a user turn, never between a call and its output.
import { itemTokenCount, type Tokenizer } from '../context/index.js';
import { isMessage, isUserMessage, textOf, type MemoryItem } from '../items/index.js';
import { findStepBoundaryCut, findTurnBoundaryCut, findUserTurnAfter } from './turn-boundary.js';

export interface CutSettings {
  readonly maxItems?: number | undefined;
  readonly keepTokens?: number | undefined;
  readonly compactAboveTokens?: number | undefined;
  /** The policy keeps the user messages it compacts as items (`retainUserMessages`), so cutting only them gains nothing. */
  readonly retainsUserMessages?: boolean | undefined;
}

/** The first index whose suffix fits `keepTokens` (at least the newest item is kept). */
const tokenCut = (items: readonly MemoryItem[], keepTokens: number, tokenizer: Tokenizer): number => {
  let total = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    total += itemTokenCount(items[i]!, tokenizer);
    if (total > keepTokens) return Math.min(i + 1, items.length - 1);
  }
  return 0;
};

const suffixTokens = (items: readonly MemoryItem[], from: number, tokenizer: Tokenizer): number => {
  let total = 0;
  for (let i = from; i < items.length; i++) total += itemTokenCount(items[i]!, tokenizer);
  return total;
};

/**
 * Where to cut `items` (keep `items[cut..]`), and the request to carry as the goal when the session is one request.
 * The naive cut keeps the newest `maxItems` and at most `keepTokens`; it moves back to the nearest user message. When
 * that walks back to the opening request: with later user turns, the cut moves forward to the next one; with none (one
 * long request), it is a step boundary and the request is the goal. A turn cut that would keep more than
 * `compactAboveTokens` (default twice `keepTokens`) moves forward to a step boundary instead.
 * @example compactionCut(items, { maxItems: 10 }, approxTokenizer) // { cut: 4 }
 */
export const compactionCut = (items: readonly MemoryItem[], s: CutSettings, tokenizer: Tokenizer): { cut: number; request?: string } => {
  const byItems = s.maxItems !== undefined ? items.length - s.maxItems : 0;
  const byTokens = s.keepTokens !== undefined && items.length > 0 ? tokenCut(items, s.keepTokens, tokenizer) : 0;
  const naive = Math.max(byItems, byTokens);
  if (naive <= 0) return { cut: 0 };
  const cut = findTurnBoundaryCut(items, naive);
  const first = items.findIndex((item) => isUserMessage(item));
  // The cut walked back to the session's opening request (with nothing but system text before it).
  const atOpeningRequest =
    cut === 0 || (cut === first && items.slice(0, cut).every((i) => isMessage(i) && (i.role === 'system' || i.role === 'developer')));
  if (atOpeningRequest) {
    const after = findUserTurnAfter(items, naive);
    const later = after > first ? after : first >= 0 ? findUserTurnAfter(items, first + 1) : -1;
    if (later > first && later > 0) return { cut: later };
    const step = findStepBoundaryCut(items, naive);
    if (step <= first) return { cut: cut > 0 ? cut : 0 };
    const request = first >= 0 && first < step ? textOf(items[first]!) : undefined;
    return request !== undefined ? { cut: step, request } : { cut: step };
  }
  // Nothing but requests (and system text) before the turn cut, and the policy keeps the user messages it compacts as
  // items: cutting there summarises nothing (every other compaction of the demo's long tasks was such a no-op). Cut at
  // a later user turn, or else at a step boundary inside the current request.
  if (s.retainsUserMessages === true && items.slice(0, cut).every((i) => isMessage(i) && (i.role === 'system' || i.role === 'developer' || i.role === 'user'))) {
    const later = findUserTurnAfter(items, naive);
    if (later > cut) return { cut: later };
    const step = findStepBoundaryCut(items, naive);
    return { cut: step > cut ? step : 0 };
  }
  if (s.keepTokens !== undefined && cut < naive) {
    const limit = s.compactAboveTokens ?? 2 * s.keepTokens;
    if (suffixTokens(items, cut, tokenizer) > limit) {
      const step = findStepBoundaryCut(items, naive);
      if (step > cut) return { cut: step };
    }
  }
  return { cut };
};
