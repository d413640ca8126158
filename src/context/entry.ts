// `context-ledger/context`: the projection path alone (projectors, budgets, tokenizers, token counts, tool pairing and
// the item helpers), for a caller that only projects. It loads none of zod, ajv, immer, fp-ts or level: budgets are
// checked without zod (zod is loaded only to explain an invalid one). The zod schemas (ContextBudgetSchema,
// ProjectionFactsSchema, TokenCountSnapshotSchema), the count snapshots and the log, memory and runtime stay on the
// main entry. test/context/context-entry.test.ts checks what this entry loads.
export { InvalidBudgetError, budgetLimit, isInvalidBudgetError, itemTokenLimit, parseContextBudget } from './budget.js';
export type { ContextBudget } from './budget.js';
export { projectContext } from './project.js';
export type { ContextProjection, ProjectContextOptions } from './project.js';
export { dropOrphans, projectForModel } from './orphans.js';
export {
  DefaultContextProjector,
  TypeAwareContextProjector,
  UnknownComponentError,
  contextProjectorFromDescription,
  isUnknownComponentError,
  projectorTokenizer,
  tokenizerFromDescription,
} from './projectors.js';
export type { ContextProjector, ContextProjectorOptions, ProjectorRegistry, TypeAwareContextProjectorOptions } from './projectors.js';
export { approxTokenizer, isPrefetchingTokenizer, openAiTokenizer, recordedCountsTokenizer, textDigest, tokenizerFromName } from './measure/tokenizer.js';
export type { OpenAiEncoding, PrefetchingTokenizer, Tokenizer } from './measure/tokenizer.js';
export { ITEM_TOKEN_OVERHEAD, itemApproxChars, itemTokenCount } from './measure/items.js';
export { providerTextsOf } from './measure/texts.js';
export { toolPairGroups } from './history.js';
export type { ToolPairGroups } from './tool-pairs.js';
export { CLEARED_REASONING_TEXT, clearedToolResultText } from './tiers.js';
export { clearProjectionCaches } from './caches.js';
export { REQUEST_PRIMING_TOKENS, effectiveBudget, requestOverheadTokens } from './request-budget.js';
export type { OverheadPrompt, RequestAllowance } from './request-budget.js';
export {
  approxChars,
  assistantMessage,
  callIdsOf,
  functionCall,
  functionCallOutput,
  isFunctionCall,
  isFunctionCallOutput,
  isMessage,
  isReasoning,
  isUserMessage,
  outputCallIdOf,
  reasoning,
  systemMessage,
  textOf,
  userMessage,
} from '../items/index.js';
export type {
  ContentPart,
  FunctionCallItem,
  FunctionCallOutputItem,
  MemoryItem,
  MessageItem,
  MessageRole,
  OtherItem,
  ReasoningItem,
  ToolCall,
} from '../items/index.js';
export type { ContextReport, FateRule, ItemFate } from '../events/index.js';
