// Public face of memory: the reducers (memory, run, session), the folds and the event-sourced AgentMemory.
export { changesMemory, createMemoryFold, entriesAppendedFrom, foldMemory, foldMemoryAsync, memoryReducer, rewoundMemoryOf } from './reducer.js';
export { MemoryStateSchema, blocksIdOf, factOf, initialMemoryState, itemId, summaryIdOf } from './state.js';
export type { LastCompaction, MemoryEntry, MemoryState, WorkingMemoryBlock } from './state.js';
export { createEventSourcedMemory, deferWrite, deferredGroups, deferredReachCheckpoint, flushDeferred, renderWorkingMemory, visibleEntries, workingMemoryIndex } from './agent-memory.js';
export type { AgentMemory, EventAppender, EventSourcedMemoryOptions, MemoryCompressor } from './agent-memory.js';
export { compactionEventFor, lastFactSeq } from './compaction.js';
export type { CompactionMeta } from './compaction.js';
