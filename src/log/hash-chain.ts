// The hash chain: each event's hash is sha256 over the previous hash and the event's canonical JSON.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../events/index.js';

/** The prevHash of a session's first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** Hash of an event (all fields but `hash` itself) chained to `prevHash`. */
export const chainHash = (prevHash: string, eventWithoutHash: Record<string, unknown>): string => {
  const { hash: _ignored, ...rest } = eventWithoutHash;
  return createHash('sha256').update(prevHash).update(canonicalJson(rest)).digest('hex');
};
