// AgentRunError: why a run ended without an answer (the same reason is recorded as `run.failed`).

export type RunFailureReason = 'max-steps' | 'aborted' | 'error' | 'interrupted';

export class AgentRunError extends Error {
  readonly _tag = 'AgentRunError' as const;
  constructor(
    readonly reason: RunFailureReason,
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
