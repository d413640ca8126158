// Public face of model: the ModelClient contract.
export type { ModelClient, ModelRequest, ModelResult, ModelUsage, ToolSpec } from './types.js';
