// Public face of log: the SessionEventLog contract and its two stores.
export type { AppendOptions, Clock, LevelLogOptions, LogOptions, PutCheckpointOptions, ReadOptions, SessionEventLog, StoredCheckpoint, VerifyResult } from './types.js';
export {
  ExpectedSeqConflictError,
  InvalidSessionIdError,
  LogClosedError,
  LogInUseError,
  isExpectedSeqConflictError,
  isInvalidSessionIdError,
  isLogClosedError,
  isLogInUseError,
} from './errors.js';
export { createMemoryLog, openLevelLog, openMemoryLog } from './open.js';
export { GENESIS_HASH, chainHash } from './hash-chain.js';
export { createStoreLog } from './store.js';
export type { StringLevel } from './store.js';
