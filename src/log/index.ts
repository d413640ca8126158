// Public face of log: the SessionEventLog contract, the protocol over the engine port, and its stores.
export type {
  Anchor,
  AppendOptions,
  Clock,
  LevelLogOptions,
  LogOptions,
  PutCheckpointOptions,
  ReadOptions,
  SessionEventLog,
  StoredCheckpoint,
  VerifyOptions,
  VerifyResult,
  DeleteSessionResult,
} from './types.js';
export { secretRedactor, RedactionError, isRedactionError } from './redact.js';
export type { Redaction, RedactionResult, RedactionRule, Redactor, SecretRedactorOptions } from './redact.js';
export { ERASED_PLACEHOLDER, ErasureRefusedError, isErasureRefusedError, placeholderPayload } from './erasure.js';
export { deterministicSalts } from './salt.js';
export type { SaltSource } from './salt.js';
export type { EraseOptions, EraseResult, EraseSelector, ErasedMark } from './erasure.js';
export type { ImportResult, SubscribeOptions } from './types.js';
export { StoredChainError, isStoredChainError, verifyStoredTexts } from './stored.js';
export type { VerifiedStored } from './stored.js';
export { followSession } from './follow.js';
export type { FollowSource } from './follow.js';
export { SessionsDivergeError, copySession, isSessionsDivergeError } from './copy.js';
export type { CopySessionOptions, CopySessionResult } from './copy.js';
export {
  ChainBrokenError,
  ExpectedSeqConflictError,
  InvalidCheckpointError,
  InvalidSessionIdError,
  LogClosedError,
  LogInUseError,
  LogWriteError,
  MAX_SESSION_ID_LENGTH,
  SeqLimitError,
  UnknownSessionError,
  isChainBrokenError,
  isExpectedSeqConflictError,
  isInvalidCheckpointError,
  isInvalidSessionIdError,
  isLogClosedError,
  isLogInUseError,
  isLogWriteError,
  isSeqLimitError,
  isUnknownSessionError,
} from './errors.js';
export { createMemoryLog, openLevelLog, openMemoryLog } from './open.js';
export { CURRENT_CHAIN_VERSION, GENESIS_HASH, chainHash } from './hash-chain.js';
export type { ChainKey, ChainVersion } from './hash-chain.js';
export { ChainKeyMismatchError, chainKeyId, isChainKeyMismatchError } from './chain-key.js';
export type { ChainKeyMismatch } from './chain-key.js';
export { createStoreLog } from './store.js';
export { writerStateCount } from './writer-states.js';
export type { StringLevel } from './store.js';
export { createSessionEventLog } from './protocol.js';
export type { SessionEventLogOptions } from './protocol.js';
export { createLevelEngine } from './level-engine.js';
export type { LevelEngineOptions } from './level-engine.js';
export type { EngineHead, EngineHeadRecord, EngineRewrite, EngineRow, EngineWrite, HeldSession, SessionLogEngine, StoredRow } from './engine.js';
