// Public face of session: AgentSession (compaction, checkpoints, resume) and log-backed memory.
export { InMemoryAgentMemory, appenderFor, openAgentMemory } from './agent-memory.js';
export type { InMemoryAgentMemoryOptions, OpenAgentMemoryOptions } from './agent-memory.js';
export { openSession } from './session.js';
export { CompactionConflictError, isCompactionConflictError } from './errors.js';
export type { AgentSession, AgentSessionSnapshot, CompactHookContext, CompactedHookContext, OpenSessionOptions, SessionHooks } from './session.js';
export { rebuildState, writeCheckpoint } from './checkpoint.js';
export type { RebuiltState } from './checkpoint.js';
