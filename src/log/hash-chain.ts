// The hash chain: each event's hash is sha256 (or HMAC-SHA256 with a chain key) over the previous hash and the event's canonical JSON.
import * as crypto from 'node:crypto';
import { canonicalMember, isSkippedMember, prefixedCanonicalJson, sortKeysInPlace } from '../base/canonical.js';
import { canonicalJson } from '../base/index.js';

/** The prevHash of a session's first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** A key for a keyed chain (HMAC-SHA256); see `chainKey` in the log options. */
export type ChainKey = string | Uint8Array;

// One-shot hashing (Node ≥ 20.12) skips the Hash object; the digest is the same.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;
const sha256Hex = (text: string): string =>
  oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');

/** The chain hash of `prevHash + canonicalText`, given as one string. */
const hashOfJoined = (joined: string, key?: ChainKey): string =>
  key === undefined ? sha256Hex(joined) : crypto.createHmac('sha256', key).update(joined).digest('hex');

/** Hash chained to `prevHash` of an event whose canonical JSON (without `hash`) is `canonicalText`. */
export const chainHashOfText = (prevHash: string, canonicalText: string, key?: ChainKey): string => hashOfJoined(prevHash + canonicalText, key);

/**
 * Hash of an event (all fields but `hash` itself) chained to `prevHash`; with `key`, the keyed
 * (HMAC-SHA256) hash a log opened with that `chainKey` writes.
 * @example chainHash(GENESIS_HASH, storedEventWithoutHash) === storedEvent.hash
 */
export const chainHash = (prevHash: string, event: Record<string, unknown>, key?: ChainKey): string => {
  if (typeof event['contentDigest'] === 'string') {
    const digest = isRecordValue(event['erased']) ? event['contentDigest'] : contentDigestOf(event);
    return chainHashOfText(prevHash, canonicalJson(sealedEnvelopeOf(event, digest)), key);
  }
  if (!('hash' in event)) return chainHashOfText(prevHash, canonicalJson(event), key);
  const { hash: _ignored, ...rest } = event;
  return chainHashOfText(prevHash, canonicalJson(rest), key);
};

/**
 * Seals an event: its hash, and the text to store, which is its canonical JSON with `hash` added
 * last (one serialisation serves both). Sets `hash` on the object.
 */
export const sealEvent = (prevHash: string, unhashed: Record<string, unknown>, key?: ChainKey): { hash: string; text: string } => {
  // what is hashed: prevHash and the canonical JSON, one string; the stored text is sliced from it
  const joined = prefixedCanonicalJson(prevHash, unhashed);
  const hash = hashOfJoined(joined, key);
  unhashed['hash'] = hash;
  return { hash, text: `${joined.slice(prevHash.length, -1)},"hash":"${hash}"}` };
};

// ---- chain version 2: the hash covers the envelope and a digest of the payload (issue 22) ----

/** The chain versions: 1 hashes the whole event (decision 0005), 2 its envelope and `contentDigest` (decision 0023). */
export type ChainVersion = 1 | 2;

/** The chain version new sessions are written with. */
export const CURRENT_CHAIN_VERSION: ChainVersion = 2;

/** Keys of a stored event that are not its payload. */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set(['sessionId', 'seq', 'at', 'v', 'type', 'prevHash', 'hash', 'contentDigest', 'contentSalt', 'redactions', 'erased']);

/** Envelope keys a version-2 hash covers (besides `contentDigest`): all but `hash`, the `erased` mark added later and `contentSalt` (the digest covers it). */
const SEALED_KEYS = ['at', 'prevHash', 'redactions', 'seq', 'sessionId', 'type', 'v'] as const;
const SEALED_KEY_SET: ReadonlySet<string> = new Set(SEALED_KEYS);

const isRecordValue = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Whether a stored event (parsed) is of chain version 2. */
export const chainVersionOf = (record: Record<string, unknown>): ChainVersion => (typeof record['contentDigest'] === 'string' ? 2 : 1);

/** Whether a key of a stored event belongs to the envelope rather than the payload. */
export const isEnvelopeKey = (key: string): boolean => ENVELOPE_KEYS.has(key);

/** The payload of a stored or new event: every key but the envelope's. */
export const payloadOf = (event: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(event)) if (!ENVELOPE_KEYS.has(key)) out[key] = event[key];
  return out;
};

/** The salt a version-2 event's digest is taken with ('' for an event sealed without one). */
const saltOf = (event: Record<string, unknown>): string => (typeof event['contentSalt'] === 'string' ? event['contentSalt'] : '');

/**
 * sha256 hex of the event's `contentSalt` followed by the canonical JSON of its payload (what a version-2 event stores
 * as `contentDigest`). The salt is random per event and erased with the payload, so an erased short payload cannot be
 * guessed by hashing candidates.
 */
export const contentDigestOf = (event: Record<string, unknown>): string => sha256Hex(saltOf(event) + canonicalJson(payloadOf(event)));

/** sha256 hex of the canonical JSON of a payload, unsalted: what `event.erased.copies` records of an event whose copies were scrubbed. */
export const payloadDigestOf = (event: Record<string, unknown>): string => sha256Hex(canonicalJson(payloadOf(event)));

/** What a version-2 hash covers: the sealed envelope keys and `contentDigest`. */
const sealedEnvelopeOf = (event: Record<string, unknown>, contentDigest: unknown): Record<string, unknown> => {
  const out: Record<string, unknown> = { contentDigest };
  for (const key of SEALED_KEYS) if (event[key] !== undefined) out[key] = event[key];
  return out;
};

/**
 * Seals an event in chain version 2: sets `contentDigest` (sha256 of its `contentSalt` and the canonical payload) and `hash`
 * (over prevHash, the envelope and the digest), and gives the text to store: the canonical JSON of the
 * whole event with `hash` last. The payload is serialised once; its members build both texts.
 */
export const sealEventV2 = (prevHash: string, unhashed: Record<string, unknown>, key?: ChainKey): { hash: string; text: string } => {
  if (!('contentDigest' in unhashed)) unhashed['contentDigest'] = undefined;
  const keys = Object.keys(unhashed);
  sortKeysInPlace(keys);
  const members: string[] = [];
  const payloadMembers: string[] = [];
  // The sealed envelope's members, in the same (sorted) order: its canonical JSON without building it again.
  const envelopeMembers: string[] = [];
  let contentAt = 0;
  let envelopeContentAt = 0;
  for (const name of keys) {
    if (name === 'contentDigest') {
      contentAt = members.length;
      members.push('');
      envelopeContentAt = envelopeMembers.length;
      envelopeMembers.push('');
      continue;
    }
    const value = unhashed[name];
    if (name === 'hash' || isSkippedMember(value)) continue;
    const member = canonicalMember(name, value);
    members.push(member);
    if (!ENVELOPE_KEYS.has(name)) payloadMembers.push(member);
    else if (SEALED_KEY_SET.has(name)) envelopeMembers.push(member);
  }
  const contentDigest = sha256Hex(`${saltOf(unhashed)}{${payloadMembers.join(',')}}`);
  unhashed['contentDigest'] = contentDigest;
  const digestMember = canonicalMember('contentDigest', contentDigest);
  members[contentAt] = digestMember;
  envelopeMembers[envelopeContentAt] = digestMember;
  // = prevHash + canonicalJson(sealedEnvelopeOf(unhashed, contentDigest)): the same members, sorted the same way.
  const hash = hashOfJoined(`${prevHash}{${envelopeMembers.join(',')}}`, key);
  unhashed['hash'] = hash;
  return { hash, text: `{${members.join(',')},"hash":"${hash}"}` };
};

/** Seals an event in the given chain version (see {@link sealEvent} and {@link sealEventV2}). */
export const sealEventAs = (version: ChainVersion, prevHash: string, unhashed: Record<string, unknown>, key?: ChainKey): { hash: string; text: string } =>
  version === 2 ? sealEventV2(prevHash, unhashed, key) : sealEvent(prevHash, unhashed, key);

/** The version-2 hash of a stored event given its `contentDigest` (not recomputed from the payload). */
export const envelopeHash = (prevHash: string, event: Record<string, unknown>, contentDigest: string, key?: ChainKey): string =>
  chainHashOfText(prevHash, canonicalJson(sealedEnvelopeOf(event, contentDigest)), key);
