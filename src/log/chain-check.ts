// Checking stored events against the hash chain: one event's link (read with verify) and a whole session with anchors (verify).
import { isPlaceholderPayload } from './erasure.js';
import { chainHash, envelopeHash, payloadDigestOf, payloadOf, type ChainKey } from './hash-chain.js';
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
    const mark = erased as { seq?: unknown; reason?: unknown; copy?: unknown; items?: unknown } | null;
    if (mark === null || typeof mark !== 'object' || !Number.isSafeInteger(mark.seq) || (mark.seq as number) <= keySeq || typeof mark.reason !== 'string') {
      return 'the erased mark is not { seq: a later seq, at, reason, by? }';
    }
    if (mark.copy !== undefined && mark.copy !== true) return 'the erased mark has a copy flag that is not true';
    if (record['contentSalt'] !== undefined) return 'erased, but it still carries its content salt';
    // An event scrubbed of copies keeps the rest of its content: the event.erased that names it vouches for it by digest (createErasureCheck).
    if (mark.copy !== true && !isPlaceholderPayload(String(record['type']), payloadOf(record))) return 'erased, but its payload holds more than placeholders';
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
 * erased event names (in its mark) a later `event.erased` event that lists it, with the same reason and by, and an
 * event scrubbed of copies is listed there with the digest of its payload as it is; gives the erased and scrubbed seqs.
 */
export const createErasureCheck = () => {
  let version: number | undefined;
  /** marked seq → what the event.erased its mark names must say of it */
  const marks = new Map<number, string>();
  /** claimed seq → what each event.erased that lists it says of it */
  const claims = new Map<number, Set<string>>();
  const markKey = (seq: unknown, reason: unknown, by: unknown, copy?: { digest: unknown; items: unknown }): string =>
    JSON.stringify([seq, reason, by ?? null, copy === undefined ? null : [copy.digest, copy.items ?? []]]);
  const claim = (seq: unknown, key: string): void => {
    if (typeof seq !== 'number') return;
    let set = claims.get(seq);
    if (!set) claims.set(seq, (set = new Set()));
    set.add(key);
  };
  const erasedSeqs: number[] = [];
  const copySeqs: number[] = [];
  return {
    /** Takes the next checked event; the problem with it, if any. */
    add(seq: number, raw: Record<string, unknown>): string | undefined {
      const v = typeof raw['contentDigest'] === 'string' ? 2 : 1;
      if (version === undefined) version = v;
      else if (v !== version) return `event ${seq} is of chain version ${v} but the session's first event is of version ${version}`;
      const mark = raw['erased'] as { seq: number; reason: string; by?: string; copy?: true; items?: unknown } | undefined;
      if (mark !== undefined) {
        if (mark.copy === true) {
          marks.set(seq, markKey(mark.seq, mark.reason, mark.by, { digest: payloadDigestOf(raw), items: mark.items }));
          copySeqs.push(seq);
        } else {
          marks.set(seq, markKey(mark.seq, mark.reason, mark.by));
          erasedSeqs.push(seq);
        }
      }
      if (raw['type'] === 'event.erased') {
        if (Array.isArray(raw['seqs'])) for (const claimed of raw['seqs'] as unknown[]) claim(claimed, markKey(seq, raw['reason'], raw['by']));
        if (Array.isArray(raw['copies'])) {
          for (const copy of raw['copies'] as unknown[]) {
            if (copy === null || typeof copy !== 'object') continue;
            const c = copy as { seq?: unknown; digest?: unknown; items?: unknown };
            claim(c.seq, markKey(seq, raw['reason'], raw['by'], { digest: c.digest, items: c.items }));
          }
        }
      }
      return undefined;
    },
    /** The first marked seq that no `event.erased` event (the one its mark names, saying the same of it) lists. */
    unclaimed(): number | undefined {
      for (const [seq, key] of marks) if (!claims.get(seq)?.has(key)) return seq;
      return undefined;
    },
    /** Whether the unclaimed seq was scrubbed of copies (its payload is not the one the erasure recorded) rather than erased. */
    isCopy(seq: number): boolean {
      return copySeqs.includes(seq);
    },
    erased(): number[] {
      return erasedSeqs;
    },
    /** The seqs scrubbed of copies of erased content. */
    copies(): number[] {
      return copySeqs;
    },
  };
};

/** What verify says of a marked event that no `event.erased` vouches for. */
export const unclaimedProblem = (seq: number, isCopy: boolean): string =>
  isCopy
    ? `event ${seq} is marked as scrubbed of copies of erased content, but no event.erased of the session lists it with the digest of its payload as it is (changed since?)`
    : `event ${seq} is marked erased but no event.erased event of the session names it`;

/** The `verify` result of a valid chain, with the erased and scrubbed seqs when there are any. */
export const validWithErasures = (count: number, erasures: ReturnType<typeof createErasureCheck>): VerifyResult => {
  const erased = erasures.erased();
  const copies = erasures.copies();
  return {
    valid: true,
    eventCount: count,
    firstBrokenSeq: null,
    ...(erased.length > 0 ? { erased } : {}),
    ...(copies.length > 0 ? { copies } : {}),
  };
};
