// AgentRunError: why a run ended without an answer (the same reason is recorded as `run.failed`), or never started.

/** Why a run ended without an answer, as recorded in `run.failed`. */
export type RunFailureReason = 'max-steps' | 'aborted' | 'error' | 'interrupted';

/** The reason of an {@link AgentRunError}: a recorded failure, or `invalid-input` (nothing was written, `runId` is ''). */
export type AgentRunErrorReason = RunFailureReason | 'invalid-input';

export class AgentRunError extends Error {
  readonly _tag = 'AgentRunError' as const;
  constructor(
    readonly reason: AgentRunErrorReason,
    message: string,
    readonly runId: string,
    readonly sessionId: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AgentRunError';
  }
}

export const isAgentRunError = (e: unknown): e is AgentRunError => e instanceof AgentRunError;
