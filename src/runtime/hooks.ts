// Lifecycle hooks of the step loop. Hooks observe; only beforeCompact can veto. A throwing hook is recorded and the run goes on.
import type { ContextReport, SessionEvent } from '../events/index.js';
import type { MemoryItem, ToolCallInfo } from '../items/index.js';
import type { ModelRequest, ModelResult, ModelStreamPart } from '../model/index.js';
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
  /** After the `tool.result` of each call that ran to an end; a call an abort ended while its tool ran gets none. */
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

/**
 * What the runtime tells a host as it works: every event appended (`EVENT`), and the report of each prompt built
 * (`CONTEXT_PROJECTED`, once per step, whether or not anything was dropped), and each delta of a streamed answer (`MODEL_DELTA`). `MEMORY_COMPRESS` is the reference's
 * name for the same notification: it is still sent, right after `CONTEXT_PROJECTED` with the same fields, so
 * existing hosts keep working; new code should listen to `CONTEXT_PROJECTED` (see docs/decisions/0016-curated-public-api.md).
 * @example onEvent: (n) => { if (n.type === 'CONTEXT_PROJECTED') console.log(n.step, n.report.droppedItemCount); }
 */
export type RuntimeNotification =
  | { readonly type: 'EVENT'; readonly event: SessionEvent }
  | { readonly type: 'CONTEXT_PROJECTED'; readonly sessionId: string; readonly runId: string; readonly step: number; readonly report: ContextReport }
  /** @deprecated The same notification as `CONTEXT_PROJECTED` (sent right after it), under the reference's name. */
  | { readonly type: 'MEMORY_COMPRESS'; readonly sessionId: string; readonly runId: string; readonly step: number; readonly report: ContextReport }
  /** A delta of a streamed answer (`run(input, { onDelta })` with a client that streams); never an event, never recorded. */
  | {
      readonly type: 'MODEL_DELTA';
      readonly sessionId: string;
      readonly runId: string;
      readonly step: number;
      readonly delta: Exclude<ModelStreamPart, { readonly type: 'finish' }>;
    };
