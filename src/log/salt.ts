// Content salts of chain-version-2 events: where they come from (random by default, injected for tests) and their check.
import * as crypto from 'node:crypto';
import { InvalidEventError } from '../events/index.js';
import { InvalidOptionsError } from '../base/errors.js';

/** Where each chain-version-2 event's `contentSalt` comes from: a hex string of 32 to 128 digits per call (see the log option `salt`). */
export type SaltSource = () => string;

const SALT = /^[0-9a-f]{32,128}$/;
const POOL_BYTES = 4096;
const SALT_BYTES = 16;

/**
 * The default salt source: 16 random bytes (hex) per event from node:crypto, drawn from a pooled buffer.
 * @example openMemoryLog({ salt: randomSalts() }) // the default
 */
export const randomSalts = (): SaltSource => {
  const pool = Buffer.alloc(POOL_BYTES);
  let at = POOL_BYTES;
  return () => {
    if (at + SALT_BYTES > POOL_BYTES) {
      crypto.randomFillSync(pool);
      at = 0;
    }
    const salt = pool.toString('hex', at, at + SALT_BYTES);
    at += SALT_BYTES;
    return salt;
  };
};

/**
 * A deterministic salt source for tests (never in production: a salt that can be predicted does not hide a short
 * erased payload): the n-th salt is the first 32 hex digits of sha256(`${seed}:${n}`), so the same appends give the
 * same stored bytes.
 * @example openMemoryLog({ salt: deterministicSalts('my-test') })
 */
export const deterministicSalts = (seed = 'context-ledger'): SaltSource => {
  let n = 0;
  return () => crypto.createHash('sha256').update(`${seed}:${n++}`).digest('hex').slice(0, 32);
};

/** The `salt` log option, checked (default: {@link randomSalts}). */
export const saltOption = (value: unknown): SaltSource => {
  if (value === undefined) return randomSalts();
  if (typeof value !== 'function') throw new InvalidOptionsError('the log', [{ path: 'salt', message: `must be a function returning a hex string, got ${typeof value}` }]);
  return value as SaltSource;
};

/** One salt from the source, checked; a bad one (or a throw) is an InvalidEventError at path `contentSalt`, and nothing is written. */
export const saltFrom = (sessionId: string, source: SaltSource, index = 0): string => {
  let problem: string;
  try {
    const value: unknown = source();
    if (typeof value === 'string' && SALT.test(value)) return value;
    problem = `the salt source returned ${typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value}; expected 32 to 128 lowercase hex digits`;
  } catch (cause) {
    problem = `the salt source threw: ${cause instanceof Error ? cause.message : 'a non-Error value'}`;
  }
  throw new InvalidEventError({ sessionId, index, issues: [{ path: 'contentSalt', message: problem }] });
};
