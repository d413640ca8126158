// The SessionEventLog over any abstract-level store (LevelDB on disk or memory-level): the protocol over the level engine.
import type { UpcasterRegistry } from '../events/index.js';
import type { ChainKey, ChainVersion } from './hash-chain.js';
import { createLevelEngine, type StringLevel } from './level-engine.js';
import { createSessionEventLog } from './protocol.js';
import type { Redactor } from './redact.js';
import type { SaltSource } from './salt.js';
import type { Clock, SessionEventLog } from './types.js';

export type { StringLevel } from './level-engine.js';
export { seqOption } from './validate.js';
export { writerStateCount } from './writer-states.js';

export interface StoreOptions {
  readonly clock?: Clock | undefined;
  readonly sync?: boolean | undefined;
  /** Keyed chain (HMAC-SHA256 with this key); see LogOptions. */
  readonly chainKey?: ChainKey | undefined;
  readonly upcasters?: UpcasterRegistry | undefined;
  /** Most appends folded into one batch (group commit). */
  readonly maxGroup?: number | undefined;
  /** Largest stored size of one event in UTF-8 bytes (default {@link DEFAULT_MAX_EVENT_BYTES}). */
  readonly maxEventBytes?: number | undefined;
  /** Redaction before append; see LogOptions. */
  readonly redact?: Redactor | undefined;
  /** The chain version new sessions are written with (default 2); see LogOptions. */
  readonly chainVersion?: ChainVersion | undefined;
  /** Where chain-version-2 content salts come from (default random); see LogOptions. */
  readonly salt?: SaltSource | undefined;
  /** Called once when `close()` has closed the store (openLevelLog releases the directory). */
  readonly onClose?: (() => void) | undefined;
}

/** Builds a SessionEventLog over an opened abstract-level store with utf8 keys and values. */
export const createStoreLog = (db: StringLevel, options: StoreOptions = {}): SessionEventLog => {
  const { sync, onClose, ...logOptions } = options;
  return createSessionEventLog(createLevelEngine(db, { sync, onClose }), logOptions);
};
