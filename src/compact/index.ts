// Public face of compact: policies, their results, and the pieces they are built from.
export type { CompactOptions, CompactPolicy, CompactResult } from './types.js';
export { describePolicy, recallHintLine } from './types.js';
export { StructuredSummaryCompactPolicy, SUMMARY_MARKER } from './structured-summary.js';
export type { StructuredSummaryOptions } from './structured-summary.js';
export { LlmCompactPolicy, LLM_COMPACT_SYSTEM_PROMPT } from './llm.js';
export type { LlmCompactOptions } from './llm.js';
export { CompactPolicyMemoryCompressor } from './compressor.js';
export { EmptySummaryError, isEmptySummaryError } from './errors.js';
export { findStepBoundaryCut, findTurnBoundaryCut } from './turn-boundary.js';
export { extractFileOperations, toolNameWords } from './file-tracking.js';
export { parseSummaryAnswer, renderSummary, SUMMARY_KEYS } from './summary-format.js';
export type { StructuredSummary } from './summary-format.js';
export { factLists } from './facts.js';
export type { FactLists } from './facts.js';
export { keepNewestChars, DEFAULT_MAX_SUMMARY_CHARS } from './text.js';
export { LlmCompactPolicyArgsSchema, StructuredSummaryOptionsSchema } from './options.js';
export { compactPolicyFromDescription } from './from-description.js';
export type { ComponentRegistry, PolicyFactoryContext, PolicyFromDescriptionOptions } from './from-description.js';
