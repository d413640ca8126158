// Public face of the memory tools: recall, working memory and compaction on request.
export { MEMORY_ACCESS, memoryAccessOf } from './access.js';
export type { MemoryToolAccess } from './access.js';
export { RECALL_DESCRIPTION_START, recallTool, recallToolNameOf } from './recall.js';
export type { RecallToolOptions } from './recall.js';
export { MAX_INDEXED_CHARS, RecallIndex, recallIndexFor } from './recall-index.js';
export type { RecallHit } from './recall-index.js';
export { WORKING_MEMORY_TOOL, WorkingMemoryOptionsSchema, seedingEvents, workingMemoryTool } from './working-memory.js';
export type { WorkingMemoryBlockOptions, WorkingMemoryOptions } from './working-memory.js';
export { compactTool } from './compact-tool.js';
export type { CompactToolOptions } from './compact-tool.js';
export { itemsEnteredBy, recallKindOf, recallTextOf } from './item-text.js';
export type { EnteredItem } from './item-text.js';
