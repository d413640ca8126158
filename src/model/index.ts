// Public face of model: the ModelClient contract and a scripted client.
export type { ModelClient, ModelRequest, ModelResult, ModelStreamPart, ModelUsage, ToolSpec } from './types.js';
export { ScriptedModelClient } from './scripted.js';
export { ScriptExhaustedError, isScriptExhaustedError } from './errors.js';
export type { ScriptedAnswer } from './scripted.js';
export { AbandonedWorkError, isAbandonedWorkError, untilAborted } from './abort.js';
export { ContextOverflowError, contextOverflowFrom, isContextOverflowError, mapContextOverflow, overflowTokensOf } from './overflow.js';
