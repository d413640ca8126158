// Public face of session: AgentSession (compaction, checkpoints, resume) and log-backed memory.
export { InMemoryAgentMemory, appenderFor, openAgentMemory } from './log-memory.js';
export type { InMemoryAgentMemoryOptions, OpenAgentMemoryOptions } from './log-memory.js';
export { openSession } from './session.js';
export { rewindSession, seqOfRewindTarget } from './rewind.js';
export type { RewindOptions, RewindTarget } from './rewind.js';
export { CompactionConflictError, isCompactionConflictError } from './errors.js';
export type { AgentSession, AgentSessionSnapshot, OpenSessionOptions } from './session.js';
export { compressAfterWrite, runCompaction } from './compaction.js';
export type {
  CompactOptions as SessionCompactOptions,
  CompactHookContext,
  CompactedHookContext,
  CompactionFailure,
  CompactionSource,
  CompactionStage,
  CompactionTarget,
  RecordedCompaction,
  SessionHooks,
} from './compaction.js';
export {
  CHECKPOINT_FORMAT,
  MemoryStateSchema,
  checkpointEventFor,
  decodeCheckpoint,
  rebuildState,
  sessionStateDigest,
  writeCheckpoint,
} from './checkpoint.js';
export type { DecodedCheckpoint, RebuildOptions, RebuiltState } from './checkpoint.js';
export { SessionIntegrityError, isSessionIntegrityError } from './errors.js';
export { OpenSessionOptionsSchema, SessionHooksSchema } from './options.js';
export { memoryTokenTracker } from './memory-tokens.js';
export type { MemoryMeasure } from './memory-tokens.js';
export { CALIBRATION_WINDOW, RunApprovalSchema, RunStateSchema, RunUsageSchema, initialRunState, pendingApprovalsOf, runReducer } from './run-state.js';
export type { RunApproval, RunState, RunUsage } from './run-state.js';
export { SessionStateSchema, createSessionFold, foldSession, initialSessionState, sessionReducer } from './session-state.js';
export type { SessionState } from './session-state.js';
export { createLiveSession, deferWrite, deferredGroups, deferredReachCheckpoint, flushDeferred } from './live.js';
export type { LiveCheckpoints, LiveSession, LiveSessionOptions } from './live.js';
