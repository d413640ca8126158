// Checking stored events against the hash chain: one event's link (read with verify) and a whole session with anchors (verify).
import { chainHash, type ChainKey } from './hash-chain.js';
import type { Anchor, VerifyResult } from './types.js';

/** A stored event that holds: its parsed form and its hash. */
export interface CheckedLink {
  readonly raw: Record<string, unknown>;
  readonly hash: string;
}

/**
 * Checks one stored value, found under `keySeq`, as the event that follows `prevHash`: stored JSON,
 * the session and seq it names, its prevHash, and its content against its hash. A backend (LevelDB,
 * memory, PostgreSQL) runs every stored event through this, so all report the same problems.
 * @example const link = checkLink('s1', 1, storedText, GENESIS_HASH); if (typeof link === 'string') console.error(link)
 */
export const checkLink = (
  sessionId: string,
  keySeq: number,
  storedText: string,
  prevHash: string,
  key?: ChainKey,
): CheckedLink | string => {
  let raw: unknown;
  try {
    raw = JSON.parse(storedText);
  } catch {
    return 'stored value is not JSON';
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return 'stored value is not an event';
  const record = raw as Record<string, unknown>;
  if (record['seq'] !== keySeq || record['sessionId'] !== sessionId) {
    return `stored under seq ${keySeq} but says seq ${String(record['seq'])}`;
  }
  if (record['prevHash'] !== prevHash) return 'prevHash does not match the previous event';
  if (typeof record['hash'] !== 'string' || chainHash(prevHash, record, key) !== record['hash']) {
    return key === undefined ? 'content does not match its hash' : 'content does not match its keyed hash (or it was written with another chain key)';
  }
  return { raw: record, hash: record['hash'] };
};

const isHash = (value: unknown): value is string => typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);

/** Validates `verify`'s anchors; the problem with the first bad one, or the anchors by seq. */
export const anchorsBySeq = (anchors: readonly Anchor[] | undefined): Map<number, string> | string => {
  const bySeq = new Map<number, string>();
  if (anchors === undefined) return bySeq;
  if (!Array.isArray(anchors)) return 'anchors must be an array of { seq, hash }';
  for (let i = 0; i < anchors.length; i++) {
    const anchor = anchors[i] as Partial<Anchor> | null | undefined;
    if (!anchor || !Number.isSafeInteger(anchor.seq) || (anchor.seq as number) < 0 || !isHash(anchor.hash)) {
      return `anchors.${i} must be { seq: a non-negative integer, hash: 64 hex digits } as anchor() returns it`;
    }
    const seen = bySeq.get(anchor.seq as number);
    if (seen !== undefined && seen !== anchor.hash) return `anchors.${i} contradicts another anchor at seq ${String(anchor.seq)}`;
    bySeq.set(anchor.seq as number, anchor.hash);
  }
  return bySeq;
};

/** The `verify` result for a chain that holds up to `count` events, checked against the anchors beyond them. */
export const rollbackOf = (count: number, anchors: ReadonlyMap<number, string>): VerifyResult | undefined => {
  let highest = 0;
  for (const seq of anchors.keys()) if (seq > highest) highest = seq;
  if (highest <= count) return undefined;
  return {
    valid: false,
    eventCount: count,
    firstBrokenSeq: count + 1,
    problem: `rollback: an anchor is at seq ${highest} but the session has ${count} events (acknowledged events were removed from its end)`,
    rollback: true,
  };
};
