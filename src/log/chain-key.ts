// Whether a session's chain was sealed with this log's chain key: checked on the tip before an append, and named by a key id.
import * as crypto from 'node:crypto';
import { ContextLedgerError } from '../base/errors.js';
import { chainHash, type ChainKey } from './hash-chain.js';

/**
 * A short public name of a chain key: the first 16 hex digits of HMAC-SHA256(key, 'context-ledger chain key id').
 * It tells keys apart and reveals nothing of the key. A keyed LevelDB session's head record carries it as `keyId`.
 * @example chainKeyId('a key of thirty-two characters!!') // '…16 hex digits…'
 */
export const chainKeyId = (key: ChainKey): string => crypto.createHmac('sha256', key).update('context-ledger chain key id').digest('hex').slice(0, 16);

/** How a session's chain relates to the log's key. */
export type ChainKeyMismatch = 'keyed-session-no-key' | 'unkeyed-session-with-key' | 'other-key';

/**
 * An append to a session whose chain was sealed with another chain key, with one when this log has none, or without
 * one when this log has one: refused before anything is written (appending would leave a chain no key verifies).
 * @example try { await log.append(id, events) } catch (e) { if (ChainKeyMismatchError.isInstance(e)) console.error('open the log with the chainKey this session was written with') }
 */
export class ChainKeyMismatchError extends ContextLedgerError {
  static override readonly code = 'CHAIN_KEY_MISMATCH';
  constructor(
    readonly sessionId: string,
    readonly seq: number,
    readonly mismatch: ChainKeyMismatch,
  ) {
    const why =
      mismatch === 'keyed-session-no-key'
        ? 'the session is keyed (chainKey), and this log was opened without a chain key'
        : mismatch === 'unkeyed-session-with-key'
          ? 'the session was written without a chain key, and this log has one'
          : 'the session was sealed with another chain key (or its last event was changed)';
    super(`session ${JSON.stringify(sessionId)}: append refused, nothing written: ${why} (checked at seq ${seq})`);
  }
}
/** @deprecated use ChainKeyMismatchError.isInstance */ export const isChainKeyMismatchError = (e: unknown): e is ChainKeyMismatchError => ChainKeyMismatchError.isInstance(e);

/**
 * Throws {@link ChainKeyMismatchError} unless the stored event at the tip (`storedText`, seq `seq`) hashes under `key`
 * (no key: plain sha256). A tip that is not a parseable event is left to the caller's own checks.
 */
export const assertTipSealedWith = (sessionId: string, seq: number, storedText: string, key: ChainKey | undefined): void => {
  let raw: unknown;
  try {
    raw = JSON.parse(storedText);
  } catch {
    return;
  }
  const event = raw as Record<string, unknown> | null;
  if (!event || typeof event !== 'object' || typeof event['prevHash'] !== 'string' || typeof event['hash'] !== 'string') return;
  const prevHash = event['prevHash'];
  if (chainHash(prevHash, event, key) === event['hash']) return;
  const plain = key === undefined || chainHash(prevHash, event) === event['hash'];
  throw new ChainKeyMismatchError(sessionId, seq, key === undefined ? 'keyed-session-no-key' : plain ? 'unkeyed-session-with-key' : 'other-key');
};

/**
 * A verify result broken at `seq` by `problem`, said as a key problem when the chain fails at its first event and the
 * session names a chain key (`sessionKeyId`) other than this log's (`logKeyId`): the problem names both key ids, and
 * the result carries `keyed`, so a caller can say the chain cannot be checked without the key rather than that it is broken.
 */
export const keyedVerifyProblem = (
  seq: number,
  problem: string,
  sessionKeyId: string | undefined,
  logKeyId: string | undefined,
): { problem: string; keyed?: { keyId: string; mismatch: 'keyed-session-no-key' | 'other-key' } } => {
  if (seq !== 1 || sessionKeyId === undefined || sessionKeyId === logKeyId) return { problem };
  return {
    problem: `${problem}; the session is keyed (chain key id ${sessionKeyId}) and this log was opened ${logKeyId === undefined ? 'without a chain key' : `with another key (${logKeyId})`}`,
    keyed: { keyId: sessionKeyId, mismatch: logKeyId === undefined ? 'keyed-session-no-key' : 'other-key' },
  };
};
