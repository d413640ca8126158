// The hash chain: each event's hash is sha256 over the previous hash and the event's canonical JSON.
import * as crypto from 'node:crypto';
import { canonicalJson } from '../events/index.js';

/** The prevHash of a session's first event. */
export const GENESIS_HASH = '0'.repeat(64);

// One-shot hashing (Node ≥ 20.12) skips the Hash object; the digest is the same.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;
const sha256Hex = (text: string): string =>
  oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');

/** Hash chained to `prevHash` of an event whose canonical JSON (without `hash`) is `canonicalText`. */
export const chainHashOfText = (prevHash: string, canonicalText: string): string => sha256Hex(prevHash + canonicalText);

/** Hash of an event (all fields but `hash` itself) chained to `prevHash`. */
export const chainHash = (prevHash: string, event: Record<string, unknown>): string => {
  if (!('hash' in event)) return chainHashOfText(prevHash, canonicalJson(event));
  const { hash: _ignored, ...rest } = event;
  return chainHashOfText(prevHash, canonicalJson(rest));
};

/**
 * Seals an event: its hash, and the text to store, which is its canonical JSON with `hash` added
 * last (one serialisation serves both). Sets `hash` on the object.
 */
export const sealEvent = (prevHash: string, unhashed: Record<string, unknown>): { hash: string; text: string } => {
  const canonical = canonicalJson(unhashed);
  const hash = chainHashOfText(prevHash, canonical);
  unhashed['hash'] = hash;
  return { hash, text: `${canonical.slice(0, -1)},"hash":"${hash}"}` };
};
