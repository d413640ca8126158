// Public face of memory: the reducer, the fold and the event-sourced AgentMemory.
export { changesMemory, foldMemory, foldMemoryAsync, memoryReducer } from './reducer.js';
export { initialMemoryState, itemId, summaryIdOf } from './state.js';
export type { LastCompaction, MemoryEntry, MemoryState } from './state.js';
export { createEventSourcedMemory, visibleEntries } from './agent-memory.js';
export type { AgentMemory, EventAppender, EventSourcedMemoryOptions, MemoryCompressor } from './agent-memory.js';
export { compactionEventFor, lastFactSeq } from './compaction.js';
export type { CompactionMeta } from './compaction.js';
