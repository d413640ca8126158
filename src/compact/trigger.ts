// When a built-in policy compacts: items, memory tokens or the provider's reported input tokens above a threshold, without a compaction loop.
import { approxTokenizer, itemTokenCount } from '../context/index.js';
import type { MemorySnapshot } from '../events/index.js';
import { systemMessage } from '../items/index.js';
import type { CompactContext, CompactReason } from './types.js';

/** A policy's trigger: `compactAbove` items, `compactAboveTokens` tokens (memory's, or the last request's as reported); what it keeps. */
export interface TriggerSettings {
  readonly compactAbove?: number | undefined;
  readonly keepItems?: number | undefined;
  readonly compactAboveTokens?: number | undefined;
  readonly keepTokens?: number | undefined;
}

/** Memory's approximate tokens, for a caller that gives no context (the one-argument `shouldCompact`). */
const approxMemoryTokens = (snapshot: MemorySnapshot): number => {
  let total = snapshot.summary?.trim() ? itemTokenCount(systemMessage(snapshot.summary), approxTokenizer) : 0;
  for (const item of snapshot.items) total += itemTokenCount(item, approxTokenizer);
  return total;
};

/** How much memory must grow past what a compaction left above its trigger before the policy tries again. */
const tokenGap = (s: TriggerSettings, threshold: number): number => Math.max(1, threshold - (s.keepTokens ?? Math.floor(threshold / 2)));

/**
 * The reason to compact now, or undefined. Items: more than `compactAbove`. Tokens: memory's tokens above
 * `compactAboveTokens`. Usage: the provider's `lastInputTokens` above it. No loop: when the last compaction left memory
 * above a trigger (it could not get below), that trigger waits until memory has grown by the gap between the trigger and
 * what the policy keeps.
 * @example compactTriggerOf({ compactAboveTokens: 8000, keepTokens: 2000 }, snapshot, { tokens: 9000 }) // { kind: 'tokens', value: 9000, threshold: 8000 }
 */
export const compactTriggerOf = (s: TriggerSettings, snapshot: MemorySnapshot | null | undefined, context?: CompactContext): CompactReason | undefined => {
  if (!snapshot) return undefined;
  const items = context?.items ?? snapshot.items.length;
  if (items === 0) return undefined;
  const last = context?.lastCompaction;
  if (s.compactAbove !== undefined && items > s.compactAbove) {
    const gap = Math.max(1, s.compactAbove - (s.keepItems ?? 0));
    const stuck = last !== undefined && last.items > s.compactAbove && items < last.items + gap;
    if (!stuck) return { kind: 'items', value: items, threshold: s.compactAbove };
  }
  const threshold = s.compactAboveTokens;
  if (threshold === undefined) return undefined;
  const tokens = context?.tokens ?? approxMemoryTokens(snapshot);
  const grown = last !== undefined ? tokens - last.tokens : Infinity;
  if (tokens > threshold) {
    const stuck = last !== undefined && last.tokens > threshold && grown < tokenGap(s, threshold);
    if (!stuck) return { kind: 'tokens', value: tokens, threshold };
  }
  const usage = context?.lastInputTokens;
  if (usage !== undefined && usage > threshold) {
    // The request right after that compaction was (about) `usage - grown` tokens: still above, so wait for growth.
    const stuck = last !== undefined && usage - Math.max(0, grown) > threshold && grown < tokenGap(s, threshold);
    if (!stuck) return { kind: 'usage', value: usage, threshold };
  }
  return undefined;
};
