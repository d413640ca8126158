// Stored texts moved between stores: re-verifies a run of sealed events before any store writes them.
import { isRecord } from '../base/index.js';
import * as E from 'fp-ts/lib/Either.js';
import { decodeEvent, type UpcasterRegistry } from '../events/index.js';
import { canonicalJson } from '../base/index.js';
import { ContextLedgerError } from '../base/errors.js';
import { ExpectedSeqConflictError } from './errors.js';
import { checkLink } from './chain-check.js';
import { chainHashOfText, type ChainKey } from './hash-chain.js';

/** `importStored` got a stored text that does not continue the session's chain; nothing was written. */
export class StoredChainError extends ContextLedgerError {
  static override readonly code = 'STORED_CHAIN_BROKEN';
  constructor(
    readonly sessionId: string,
    /** Position of the offending text in the imported list. */
    readonly index: number,
    /** The seq the text should have had. */
    readonly seq: number,
    readonly problem: string,
  ) {
    super(`cannot import into session ${JSON.stringify(sessionId)}: text #${index} (seq ${seq}): ${problem}; nothing was written`);
  }
}
/** @deprecated use StoredChainError.isInstance */ export const isStoredChainError = (e: unknown): e is StoredChainError => StoredChainError.isInstance(e);

/** One verified stored event: what a store needs to write it. */
export interface VerifiedStored {
  readonly seq: number;
  readonly prevHash: string;
  readonly hash: string;
  readonly type: string;
  readonly at: string;
  readonly text: string;
}


/**
 * Checks that `texts` continue a session whose head is `head`: each parses, decodes (after upcasting),
 * is the canonical text of itself with `hash` last, names `sessionId` and the next seq, and chains
 * its hash on the previous one (HMAC-SHA256 with `chainKey` when given). Throws StoredChainError at the first bad text, and
 * ExpectedSeqConflictError when the first text's seq is not the one after `head`.
 */
export const verifyStoredTexts = (
  sessionId: string,
  head: { readonly seq: number; readonly hash: string },
  texts: readonly string[],
  options: { readonly upcasters?: UpcasterRegistry; readonly chainKey?: ChainKey } = {},
): VerifiedStored[] => {
  if (!Array.isArray(texts)) throw new StoredChainError(sessionId, 0, head.seq + 1, 'expected an array of stored texts');
  const out: VerifiedStored[] = [];
  let prevHash = head.hash;
  let firstVersion: number | undefined;
  for (let index = 0; index < texts.length; index++) {
    const seq = head.seq + 1 + index;
    const fail = (problem: string): never => {
      throw new StoredChainError(sessionId, index, seq, problem);
    };
    const text: unknown = texts[index];
    if (typeof text !== 'string') fail('not a string');
    let raw: unknown;
    try {
      raw = JSON.parse(text as string);
    } catch (cause) {
      fail(`not JSON: ${(cause as Error).message}`);
    }
    if (!isRecord(raw)) return fail('not an event object');
    if (raw['sessionId'] !== sessionId) fail(`belongs to session ${JSON.stringify(raw['sessionId'])}`);
    const claimed = raw['seq'];
    if (index === 0 && typeof claimed === 'number' && Number.isInteger(claimed) && claimed > 0 && claimed !== seq) {
      // The texts start elsewhere than after this store's head: the head moved (or the copy overlaps).
      throw new ExpectedSeqConflictError(sessionId, claimed - 1, head.seq);
    }
    if (claimed !== seq) fail(`says seq ${JSON.stringify(claimed)}`);
    if (raw['prevHash'] !== prevHash) fail(`prevHash does not match the ${seq === 1 ? 'genesis hash' : `hash of seq ${seq - 1}`}`);
    const hash = raw['hash'];
    if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) return fail('hash is not a sha256 hex digest');
    const { hash: _hash, ...unhashed } = raw;
    const canonical = canonicalJson(unhashed);
    if (`${canonical.slice(0, -1)},"hash":"${hash}"}` !== text) fail('not in canonical form (the text must be exactly as the log stored it)');
    if (unhashed['contentDigest'] !== undefined || unhashed['erased'] !== undefined) {
      const link = checkLink(sessionId, seq, text as string, prevHash, options.chainKey);
      if (typeof link === 'string') fail(link);
    } else if (chainHashOfText(prevHash, canonical, options.chainKey) !== hash) {
      fail(options.chainKey === undefined ? 'content does not match its hash' : 'content does not match its keyed hash (or it was sealed with another chain key, or without one)');
    }
    const version = unhashed['contentDigest'] !== undefined ? 2 : 1;
    if (firstVersion === undefined) firstVersion = version;
    else if (version !== firstVersion) fail(`is of chain version ${version} but the texts before it are of version ${firstVersion}`);
    const decoded = decodeEvent(raw, options);
    if (E.isLeft(decoded)) fail(`does not decode: ${decoded.left.message}`);
    out.push({ seq, prevHash, hash, type: String(raw['type']), at: String(raw['at']), text: text as string });
    prevHash = hash;
  }
  return out;
};
