// Public face of runtime: agents, the step loop, tools, hooks, CodeAct and provider shapes (SDK adapters: context-ledger/adapters).
export { Agent, AgentRunSession, Agents, parsePlan } from './agent.js';
export type { AgentOptions, ApprovalOptions, PendingApproval, RunOptions, RunResult, RuntimeKind } from './agent.js';
export type { DeltaListener, ModelDelta } from './stream.js';
export {
  AgentRunError,
  ApprovalConflictError,
  ApprovalNotPendingError,
  ApprovalsPendingError,
  ModelStreamError,
  isApprovalConflictError,
  isApprovalNotPendingError,
  isApprovalsPendingError,
  isModelStreamError,
  CallAbandonedError,
  CodeExecutionError,
  DuplicateToolError,
  NothingToContinueError,
  SessionBusyError,
  ToolFailedError,
  isAgentRunError,
  isCallAbandonedError,
  isCodeExecutionError,
  isDuplicateToolError,
  isNothingToContinueError,
  isSessionBusyError,
  isToolFailedError,
} from './errors.js';
export type { AgentRunErrorReason, RunFailureReason } from './errors.js';
export { HOOK_NAMES } from './hooks.js';
export type { AgentHooks, RuntimeNotification, ToolCallInfo, TurnContext } from './hooks.js';
export { defineTool, runTool, toolSpec } from './tools.js';
export type { ApprovalCheckContext, FactEvent, Tool, ToolContext, ToolOutcome } from './tools.js';
export { compileParameters } from './tool-schema.js';
export type { CompiledParameters, JsonSchemaParameters, ToolArguments, ToolParameters, Zod3Schema } from './tool-schema.js';
export { EXECUTE_JAVASCRIPT, executeJavascriptTool, runJavascript } from './codeact.js';
export type { ExecuteJavascriptOptions, NestedCallOptions, NestedToolCaller, RunJavascriptOptions } from './codeact.js';
export {
  CodeSandboxClosedError,
  CodeSandboxUnavailableError,
  InvalidCodeActOptionError,
  isCodeSandboxClosedError,
  isCodeSandboxUnavailableError,
  isInvalidCodeActOptionError,
} from './sandbox/errors.js';
export { createCodeSandboxPool, createReplayCodeSandboxPool } from './sandbox/worker-pool.js';
export type { CodeSandboxPool, CodeSandboxPoolOptions, CodeSandboxPoolStats } from './sandbox/worker-pool.js';
export {
  CODE_OUTPUT_LIMIT_CHARS,
  DEFAULT_CODE_MEMORY_LIMIT_BYTES,
  DEFAULT_CODE_TIMEOUT_MS,
  MIN_CODE_MEMORY_LIMIT_BYTES,
  parseCodeActLimits,
} from './sandbox/options.js';
export type { CodeActLimits, ResolvedCodeActLimits } from './sandbox/options.js';
export { ensureCodeSandbox } from './sandbox/load.js';
export * from '../providers/index.js';
export { AgentHooksSchema, AgentOptionsSchema, ApprovalOptionsSchema, RunOptionsSchema, ToolOptionSchema } from './options.js';
export { ModelAnswerError, isModelAnswerError, normalizeModelAnswer } from './normalize.js';
export type { NormalizedAnswer } from './normalize.js';
export {
  RECALL_DESCRIPTION_START,
  RecallIndex,
  WORKING_MEMORY_TOOL,
  WorkingMemoryOptionsSchema,
  compactTool,
  recallIndexFor,
  recallTool,
  workingMemoryTool,
} from './memory-tools/index.js';
export type { CompactToolOptions, RecallHit, RecallToolOptions, WorkingMemoryBlockOptions, WorkingMemoryOptions } from './memory-tools/index.js';
export { projectRequest, recordedRequestOptions } from './request-budget.js';
export { ProviderResponseError, isProviderResponseError } from '../adapters/errors.js';
export type { ProjectRequestOptions, RequestProjection } from './request-budget.js';
export { contextProjectedEvent, projectStep } from './project-step.js';
export type { ProjectedAt, StepProjection, StepRequestBudget } from './project-step.js';
export { REPLAYED_REQUEST, calibrationOf, tokenizerOfProjector } from './request-allowance.js';
export type { RecordedRequest, ReplayedRequestSource } from './request-allowance.js';
export { DEFAULT_OVERFLOW_RETRIES, tighterBudgetAfterOverflow } from './overflow.js';
