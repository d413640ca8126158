// Named errors of the runtime: why a run ended without an answer (AgentRunError), and misuse of agents and sessions.
import { ContextLedgerError } from '../base/errors.js';

/** Why a run ended without an answer, as recorded in `run.failed`. */
export type RunFailureReason = 'max-steps' | 'aborted' | 'error' | 'interrupted' | 'context-overflow';

/** The reason of an {@link AgentRunError}: a recorded failure, or `invalid-input` (nothing was written, `runId` is ''). */
export type AgentRunErrorReason = RunFailureReason | 'invalid-input';

/**
 * A run ended without an answer; `reason` is the one recorded in its `run.failed` event (`max-steps`, `aborted`,
 * `error`, `interrupted`, `context-overflow`), or `invalid-input` when the input was refused and nothing was written
 * (`runId` is `''`).
 */
export class AgentRunError extends ContextLedgerError {
  static override readonly code = 'AGENT_RUN_FAILED';
  constructor(
    readonly reason: AgentRunErrorReason,
    message: string,
    readonly runId: string,
    readonly sessionId: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
/** @deprecated use AgentRunError.isInstance */ export const isAgentRunError = (e: unknown): e is AgentRunError => AgentRunError.isInstance(e);

/** `run` was called on a session whose previous run has not ended; one run at a time per session. */
export class SessionBusyError extends ContextLedgerError {
  static override readonly code = 'SESSION_BUSY';
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} is already running`);
  }
}
/** @deprecated use SessionBusyError.isInstance */ export const isSessionBusyError = (e: unknown): e is SessionBusyError => SessionBusyError.isInstance(e);

/** `run()` without an input continues an interrupted run, but the session has none. */
export class NothingToContinueError extends ContextLedgerError {
  static override readonly code = 'NOTHING_TO_CONTINUE';
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} has no interrupted run to continue; pass an input`);
  }
}
/** @deprecated use NothingToContinueError.isInstance */ export const isNothingToContinueError = (e: unknown): e is NothingToContinueError => NothingToContinueError.isInstance(e);

/** Two tools given to one agent have the same name. */
export class DuplicateToolError extends ContextLedgerError {
  static override readonly code = 'DUPLICATE_TOOL';
  constructor(readonly toolName: string) {
    super(`two tools are named ${JSON.stringify(toolName)}`);
  }
}
/** @deprecated use DuplicateToolError.isInstance */ export const isDuplicateToolError = (e: unknown): e is DuplicateToolError => DuplicateToolError.isInstance(e);

/** A tool called from inside another tool (CodeAct's `tools.name(...)`) returned an error result. */
export class ToolFailedError extends ContextLedgerError {
  static override readonly code = 'TOOL_FAILED';
  constructor(
    readonly toolName: string,
    message: string,
  ) {
    super(message);
  }
}
/** @deprecated use ToolFailedError.isInstance */ export const isToolFailedError = (e: unknown): e is ToolFailedError => ToolFailedError.isInstance(e);

/**
 * CodeAct code threw, ran past its deadline or out of memory (the `execute_javascript` tool's error result); the
 * message is what the model sees.
 */
export class CodeExecutionError extends ContextLedgerError {
  static override readonly code = 'CODE_FAILED';
}
/** @deprecated use CodeExecutionError.isInstance */ export const isCodeExecutionError = (e: unknown): e is CodeExecutionError => CodeExecutionError.isInstance(e);

/**
 * A tool called from inside CodeAct code tried to record a fact after its call was abandoned (the code's deadline
 * passed).
 */
export class CallAbandonedError extends ContextLedgerError {
  static override readonly code = 'CALL_ABANDONED';
}
/** @deprecated use CallAbandonedError.isInstance */ export const isCallAbandonedError = (e: unknown): e is CallAbandonedError => CallAbandonedError.isInstance(e);


/**
 * A streamed answer broke its contract: it ended without its `finish` part, sent a part of unknown type, or sent parts
 * after `finish`; the run fails and nothing of the answer enters memory.
 */
export class ModelStreamError extends ContextLedgerError {
  static override readonly code = 'MODEL_STREAM';
}
/** @deprecated use ModelStreamError.isInstance */ export const isModelStreamError = (e: unknown): e is ModelStreamError => ModelStreamError.isInstance(e);

/**
 * The session's run waits for approvals: `run(input)` cannot start another run, and `run()` cannot continue until
 * every pending call is decided (`session.approve` / `session.reject`). Nothing was recorded.
 */
export class ApprovalsPendingError extends ContextLedgerError {
  static override readonly code = 'APPROVALS_PENDING';
  constructor(
    readonly sessionId: string,
    readonly callIds: readonly string[],
    message: string,
  ) {
    super(message);
  }
}
/** @deprecated use ApprovalsPendingError.isInstance */ export const isApprovalsPendingError = (e: unknown): e is ApprovalsPendingError => ApprovalsPendingError.isInstance(e);

/**
 * `approve` / `reject` named a call that is not waiting for a decision: never asked or already answered (`why:
 * 'unknown'`), or already decided (`why: 'decided'`). Nothing was recorded.
 */
export class ApprovalNotPendingError extends ContextLedgerError {
  static override readonly code = 'APPROVAL_NOT_PENDING';
  constructor(
    readonly sessionId: string,
    readonly callId: string,
    readonly why: 'unknown' | 'decided',
    message: string,
  ) {
    super(message);
  }
}
/** @deprecated use ApprovalNotPendingError.isInstance */ export const isApprovalNotPendingError = (e: unknown): e is ApprovalNotPendingError => ApprovalNotPendingError.isInstance(e);

/**
 * Another writer appended to the session since this process read it (for example another process decided the same call
 * first); this decision was not recorded.
 */
export class ApprovalConflictError extends ContextLedgerError {
  static override readonly code = 'APPROVAL_CONFLICT';
  constructor(
    readonly sessionId: string,
    readonly callId: string,
    options?: { cause?: unknown },
  ) {
    super(
      `session ${sessionId}: the decision on call ${callId} was not recorded: another writer appended to the session first (resume it to see the decision that won)`,
      options,
    );
  }
}
/** @deprecated use ApprovalConflictError.isInstance */ export const isApprovalConflictError = (e: unknown): e is ApprovalConflictError => ApprovalConflictError.isInstance(e);
