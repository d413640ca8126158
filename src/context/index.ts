// Public face of context: budgets, projectors, tokenizers, token counts and tool pairing.
export { InvalidBudgetError, budgetLimit, isInvalidBudgetError, itemTokenLimit, parseContextBudget } from './budget.js';
export { ContextBudgetSchema } from './budget-schema.js';
export type { ContextBudget } from './budget.js';
export { fateListsMadeCount, projectContext, reportFateRuns, reportFatesInSourceOrder, reportWithoutFates, withReportFields } from './project.js';
export { dropOrphans, projectForModel } from './orphans.js';
export type { ContextProjection, ProjectContextOptions } from './project.js';
export {
  DefaultContextProjector,
  TypeAwareContextProjector,
  UnknownComponentError,
  checkedDescription,
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
export { InvalidTokenCountSnapshotError, TokenCountSnapshotSchema, exportTokenCounts, importTokenCounts, tokenCountKey } from './measure/token-count-cache.js';
export type { TokenCountSnapshot } from './measure/token-count-cache.js';
export type { ToolPairGroups } from './tool-pairs.js';
export { CLEARED_REASONING_TEXT, clearedToolResultText } from './tiers.js';
export { clearProjectionCaches } from './caches.js';
export { ProjectionFactsSchema, attachProjectionFacts, projectionFactsOf } from './projection-facts.js';
export type { AttachedProjectionFacts, ProjectionFacts } from './projection-facts.js';
export { REQUEST_PRIMING_TOKENS, effectiveBudget, requestOverheadTokens } from './request-budget.js';
export type { OverheadPrompt, RequestAllowance } from './request-budget.js';
