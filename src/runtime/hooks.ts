// Lifecycle hooks of the step loop. Hooks observe; only beforeCompact can veto. A throwing hook is recorded and the run goes on.
import type { ContextReport, SessionEvent } from '../events/index.js';
import type { MemoryItem, ToolCallInfo } from '../items/index.js';
import type { ModelRequest, ModelResult } from '../model/index.js';
import type { SessionHooks } from '../session/index.js';

export interface TurnContext {
  readonly sessionId: string;
  readonly runId: string;
  readonly step: number;
}

export type { ToolCallInfo } from '../items/index.js';

export interface AgentHooks extends SessionHooks {
  beforeTurn?(context: TurnContext): void | Promise<void>;
  afterTurn?(context: TurnContext & { readonly toolCalls: number; readonly final: boolean }): void | Promise<void>;
  beforeModelRequest?(context: TurnContext & { readonly request: ModelRequest; readonly report: ContextReport }): void | Promise<void>;
  afterModelResponse?(context: TurnContext & { readonly result: ModelResult; readonly items: readonly MemoryItem[] }): void | Promise<void>;
  beforeToolCall?(context: TurnContext & { readonly call: ToolCallInfo }): void | Promise<void>;
  afterToolCall?(context: TurnContext & { readonly call: ToolCallInfo; readonly output: string; readonly isError: boolean }): void | Promise<void>;
}

export const HOOK_NAMES = [
  'beforeTurn',
  'afterTurn',
  'beforeModelRequest',
  'afterModelResponse',
  'beforeToolCall',
  'afterToolCall',
  'beforeCompact',
  'onCompact',
] as const;

/** What the runtime tells a host as it works: every event appended, and the report of each prompt built. */
export type RuntimeNotification =
  | { readonly type: 'EVENT'; readonly event: SessionEvent }
  | { readonly type: 'MEMORY_COMPRESS'; readonly sessionId: string; readonly runId: string; readonly step: number; readonly report: ContextReport };
