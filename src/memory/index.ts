// Public face of memory: the memory reducer and folds, and AgentMemory (a façade over the session's writer).
export { changesMemory, createMemoryFold, entriesAppendedFrom, foldMemory, foldMemoryAsync, memoryReducer, rewoundMemoryOf } from './reducer.js';
export { MemoryStateSchema, blocksIdOf, factOf, initialMemoryState, itemId, summaryIdOf } from './state.js';
export type { LastCompaction, MemoryEntry, MemoryState, WorkingMemoryBlock } from './state.js';
export { checkRewinds, memoryOver, renderWorkingMemory, visibleEntries, workingMemoryIndex } from './agent-memory.js';
export type { AgentMemory, EventAppender, MemoryCompressor, MemoryWriter } from './agent-memory.js';
export { compactionEventFor, lastFactSeq } from './compaction.js';
export type { CompactionMeta } from './compaction.js';
