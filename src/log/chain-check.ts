// Checking stored events against the hash chain: one event's link (read with verify) and a whole session with anchors (verify).
import { isPlaceholderPayload } from './erasure.js';
import { chainHash, envelopeHash, payloadOf, type ChainKey } from './hash-chain.js';
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
  const erased = record['erased'];
  if (erased !== undefined) {
    const mark = erased as { seq?: unknown; reason?: unknown } | null;
    if (mark === null || typeof mark !== 'object' || !Number.isSafeInteger(mark.seq) || (mark.seq as number) <= keySeq || typeof mark.reason !== 'string') {
      return 'the erased mark is not { seq: a later seq, at, reason, by? }';
    }
    if (!isPlaceholderPayload(String(record['type']), payloadOf(record))) return 'erased, but its payload holds more than placeholders';
    // Chain version 1 (the weaker form, decision 0024): the erased event's own hash cannot be recomputed; the next event's prevHash vouches for it.
    if (typeof record['contentDigest'] !== 'string') {
      return typeof record['hash'] === 'string' && /^[0-9a-f]{64}$/.test(record['hash']) ? { raw: record, hash: record['hash'] } : 'hash is not a sha256 hex digest';
    }
  }
  // Version 2: the hash covers the envelope and the digest of the payload as it is (an erased event: the digest it keeps).
  const digest = record['contentDigest'];
  const computed = typeof digest === 'string' && erased !== undefined ? envelopeHash(prevHash, record, digest, key) : chainHash(prevHash, record, key);
  if (typeof record['hash'] !== 'string' || computed !== record['hash']) {
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

/**
 * Follows a session's events through `verify`: every event has the chain version of the first, every
 * erased event names (in its mark) a later `event.erased` event that lists it, and the erased seqs.
 */
export const createErasureCheck = () => {
  let version: number | undefined;
  /** erased seq → its mark, as `seq reason by` */
  const marks = new Map<number, string>();
  /** claimed seq → the marks the event.erased events that list it would give */
  const claims = new Map<number, Set<string>>();
  const markKey = (seq: unknown, reason: unknown, by: unknown): string => JSON.stringify([seq, reason, by ?? null]);
  const erasedSeqs: number[] = [];
  return {
    /** Takes the next checked event; the problem with it, if any. */
    add(seq: number, raw: Record<string, unknown>): string | undefined {
      const v = typeof raw['contentDigest'] === 'string' ? 2 : 1;
      if (version === undefined) version = v;
      else if (v !== version) return `event ${seq} is of chain version ${v} but the session's first event is of version ${version}`;
      const mark = raw['erased'] as { seq: number; reason: string; by?: string } | undefined;
      if (mark !== undefined) {
        marks.set(seq, markKey(mark.seq, mark.reason, mark.by));
        erasedSeqs.push(seq);
      }
      if (raw['type'] === 'event.erased' && Array.isArray(raw['seqs'])) {
        for (const claimed of raw['seqs'] as unknown[]) {
          if (typeof claimed !== 'number') continue;
          let set = claims.get(claimed);
          if (!set) claims.set(claimed, (set = new Set()));
          set.add(markKey(seq, raw['reason'], raw['by']));
        }
      }
      return undefined;
    },
    /** The first erased seq that no `event.erased` event (the one its mark names, with its reason and by) lists. */
    unclaimed(): number | undefined {
      for (const [seq, by] of marks) if (!claims.get(seq)?.has(by)) return seq;
      return undefined;
    },
    erased(): number[] {
      return erasedSeqs;
    },
  };
};
