// Public face of runtime: agents, the step loop, tools, hooks, CodeAct and provider shapes (SDK adapters: context-ledger/adapters).
export { Agent, AgentRunSession, Agents, parsePlan } from './agent.js';
export type { AgentOptions, RunOptions, RunResult, RuntimeKind } from './agent.js';
export {
  AgentRunError,
  CodeTimeoutError,
  DuplicateToolError,
  NothingToContinueError,
  ProviderResponseError,
  SessionBusyError,
  ToolFailedError,
  isAgentRunError,
  isCodeTimeoutError,
  isDuplicateToolError,
  isNothingToContinueError,
  isProviderResponseError,
  isSessionBusyError,
  isToolFailedError,
} from './errors.js';
export type { RunFailureReason } from './errors.js';
export { HOOK_NAMES } from './hooks.js';
export type { AgentHooks, RuntimeNotification, ToolCallInfo, TurnContext } from './hooks.js';
export { defineTool, runTool, toolSpec } from './tools.js';
export type { FactEvent, Tool, ToolContext, ToolOutcome } from './tools.js';
export { EXECUTE_JAVASCRIPT, executeJavascriptTool, runJavascript } from './codeact.js';
export type { NestedToolCaller } from './codeact.js';
export * from './providers/index.js';
