// Named errors of the runtime: why a run ended without an answer (AgentRunError), and misuse of agents and sessions.
import { ContextLedgerError, errorGuard } from '../errors.js';

/** Why a run ended without an answer, as recorded in `run.failed`. */
export type RunFailureReason = 'max-steps' | 'aborted' | 'error' | 'interrupted' | 'context-overflow';

/** The reason of an {@link AgentRunError}: a recorded failure, or `invalid-input` (nothing was written, `runId` is ''). */
export type AgentRunErrorReason = RunFailureReason | 'invalid-input';

/** A run ended without an answer; `reason` is the one recorded in its `run.failed` event. */
export class AgentRunError extends ContextLedgerError {
  declare readonly code: 'AGENT_RUN_FAILED';
  readonly _tag = 'AgentRunError' as const;
  constructor(
    readonly reason: AgentRunErrorReason,
    message: string,
    readonly runId: string,
    readonly sessionId: string,
    options?: { cause?: unknown },
  ) {
    super('AGENT_RUN_FAILED', message, options);
    this.name = 'AgentRunError';
  }
}

export const isAgentRunError = errorGuard<AgentRunError>('AGENT_RUN_FAILED');

/** `run` was called on a session whose previous run has not ended; one run at a time per session. */
export class SessionBusyError extends ContextLedgerError {
  declare readonly code: 'SESSION_BUSY';
  readonly _tag = 'SessionBusyError' as const;
  constructor(readonly sessionId: string) {
    super('SESSION_BUSY', `session ${sessionId} is already running`);
    this.name = 'SessionBusyError';
  }
}
export const isSessionBusyError = errorGuard<SessionBusyError>('SESSION_BUSY');

/** `run()` without an input continues an interrupted run, but the session has none. */
export class NothingToContinueError extends ContextLedgerError {
  declare readonly code: 'NOTHING_TO_CONTINUE';
  readonly _tag = 'NothingToContinueError' as const;
  constructor(readonly sessionId: string) {
    super('NOTHING_TO_CONTINUE', `session ${sessionId} has no interrupted run to continue; pass an input`);
    this.name = 'NothingToContinueError';
  }
}
export const isNothingToContinueError = errorGuard<NothingToContinueError>('NOTHING_TO_CONTINUE');

/** Two tools given to one agent have the same name. */
export class DuplicateToolError extends ContextLedgerError {
  declare readonly code: 'DUPLICATE_TOOL';
  readonly _tag = 'DuplicateToolError' as const;
  constructor(readonly toolName: string) {
    super('DUPLICATE_TOOL', `two tools are named ${JSON.stringify(toolName)}`);
    this.name = 'DuplicateToolError';
  }
}
export const isDuplicateToolError = errorGuard<DuplicateToolError>('DUPLICATE_TOOL');

/** A tool called from inside another tool (CodeAct's `tools.name(...)`) returned an error result. */
export class ToolFailedError extends ContextLedgerError {
  declare readonly code: 'TOOL_FAILED';
  readonly _tag = 'ToolFailedError' as const;
  constructor(
    readonly toolName: string,
    message: string,
  ) {
    super('TOOL_FAILED', message);
    this.name = 'ToolFailedError';
  }
}
export const isToolFailedError = errorGuard<ToolFailedError>('TOOL_FAILED');

/** CodeAct code threw, ran past its deadline or out of memory; the message is what the model sees. */
export class CodeExecutionError extends ContextLedgerError {
  declare readonly code: 'CODE_FAILED';
  readonly _tag = 'CodeExecutionError' as const;
  constructor(message: string) {
    super('CODE_FAILED', message);
    this.name = 'CodeExecutionError';
  }
}
export const isCodeExecutionError = errorGuard<CodeExecutionError>('CODE_FAILED');

/** A tool called from inside CodeAct code tried to record a fact after its call was abandoned (the code's deadline passed). */
export class CallAbandonedError extends ContextLedgerError {
  declare readonly code: 'CALL_ABANDONED';
  readonly _tag = 'CallAbandonedError' as const;
  constructor(message: string) {
    super('CALL_ABANDONED', message);
    this.name = 'CallAbandonedError';
  }
}
export const isCallAbandonedError = errorGuard<CallAbandonedError>('CALL_ABANDONED');

/** A provider's response cannot be used (no choices, or the API reported a failure). */
export class ProviderResponseError extends ContextLedgerError {
  declare readonly code: 'PROVIDER_RESPONSE';
  readonly _tag = 'ProviderResponseError' as const;
  constructor(
    /** `'chat-completions'`, `'responses'`, `'anthropic'`. */
    readonly api: string,
    readonly responseId: string | undefined,
    message: string,
  ) {
    super('PROVIDER_RESPONSE', message);
    this.name = 'ProviderResponseError';
  }
}
export const isProviderResponseError = errorGuard<ProviderResponseError>('PROVIDER_RESPONSE');

/** A streamed answer broke its contract: it ended without a `finish` part, or sent a part the runtime does not know. */
export class ModelStreamError extends ContextLedgerError {
  declare readonly code: 'MODEL_STREAM';
  readonly _tag = 'ModelStreamError' as const;
  constructor(message: string) {
    super('MODEL_STREAM', message);
    this.name = 'ModelStreamError';
  }
}
export const isModelStreamError = errorGuard<ModelStreamError>('MODEL_STREAM');

/**
 * The session's run waits for approvals: `run(input)` cannot start another run, and `run()` cannot continue until
 * every pending call is decided (`session.approve` / `session.reject`). Nothing was recorded.
 */
export class ApprovalsPendingError extends ContextLedgerError {
  declare readonly code: 'APPROVALS_PENDING';
  readonly _tag = 'ApprovalsPendingError' as const;
  constructor(
    readonly sessionId: string,
    readonly callIds: readonly string[],
    message: string,
  ) {
    super('APPROVALS_PENDING', message);
    this.name = 'ApprovalsPendingError';
  }
}
export const isApprovalsPendingError = errorGuard<ApprovalsPendingError>('APPROVALS_PENDING');

/** `approve` / `reject` named a call that is not waiting for a decision: `unknown` (never asked, or already answered) or `decided`. Nothing was recorded. */
export class ApprovalNotPendingError extends ContextLedgerError {
  declare readonly code: 'APPROVAL_NOT_PENDING';
  readonly _tag = 'ApprovalNotPendingError' as const;
  constructor(
    readonly sessionId: string,
    readonly callId: string,
    readonly why: 'unknown' | 'decided',
    message: string,
  ) {
    super('APPROVAL_NOT_PENDING', message);
    this.name = 'ApprovalNotPendingError';
  }
}
export const isApprovalNotPendingError = errorGuard<ApprovalNotPendingError>('APPROVAL_NOT_PENDING');

/** Another writer appended to the session since this process read it (e.g. decided the same call first); this decision was not recorded. */
export class ApprovalConflictError extends ContextLedgerError {
  declare readonly code: 'APPROVAL_CONFLICT';
  readonly _tag = 'ApprovalConflictError' as const;
  constructor(
    readonly sessionId: string,
    readonly callId: string,
    options?: { cause?: unknown },
  ) {
    super(
      'APPROVAL_CONFLICT',
      `session ${sessionId}: the decision on call ${callId} was not recorded: another writer appended to the session first (resume it to see the decision that won)`,
      options,
    );
    this.name = 'ApprovalConflictError';
  }
}
export const isApprovalConflictError = errorGuard<ApprovalConflictError>('APPROVAL_CONFLICT');
