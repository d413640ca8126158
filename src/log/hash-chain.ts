// The hash chain: each event's hash is sha256 (or HMAC-SHA256 with a chain key) over the previous hash and the event's canonical JSON.
import * as crypto from 'node:crypto';
import { prefixedCanonicalJson } from '../events/canonical.js';
import { canonicalJson } from '../events/index.js';

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
