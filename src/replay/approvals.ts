// The approvals of a session as the audit reports them: each call that asked, who decided, why, and what came of it.
import type { SessionEvent } from '../events/index.js';
import type { SessionEventLog } from '../log/index.js';

/** One call that asked for approval (`approval.requested`) and where it stands. */
export interface ApprovalAudit {
  readonly callId: string;
  readonly name: string;
  readonly arguments: string;
  readonly step: number;
  readonly runId?: string;
  /** The seq of its `approval.requested`. */
  readonly requestedSeq: number;
  /** `pending`: no decision yet; `approved` / `rejected`: decided; `ended`: its run ended first (the call got a "not executed" result). */
  readonly status: 'pending' | 'approved' | 'rejected' | 'ended';
  readonly by?: string;
  readonly reason?: string;
  readonly decidedSeq?: number;
  /** The seq of the call's `tool.result` (after the decision, or when its run ended). */
  readonly resultSeq?: number;
}

/** A fold over a session's events that collects its approvals, in the order they were asked for. */
export const createApprovalAudit = () => {
  const byCall = new Map<string, ApprovalAudit>();
  return {
    add(event: SessionEvent): void {
      if (event.type === 'approval.requested') {
        byCall.set(event.callId, {
          callId: event.callId,
          name: event.name,
          arguments: event.arguments,
          step: event.step,
          ...(event.runId !== undefined ? { runId: event.runId } : {}),
          requestedSeq: event.seq,
          status: 'pending',
        });
      } else if (event.type === 'approval.recorded' && event.callId !== undefined) {
        const asked = byCall.get(event.callId);
        if (!asked || asked.status !== 'pending') return;
        byCall.set(event.callId, {
          ...asked,
          status: event.approved ? 'approved' : 'rejected',
          ...(event.by !== undefined ? { by: event.by } : {}),
          ...(event.reason !== undefined ? { reason: event.reason } : {}),
          decidedSeq: event.seq,
        });
      } else if (event.type === 'tool.result' && event.parentCallId === undefined) {
        const asked = byCall.get(event.callId);
        if (!asked || asked.resultSeq !== undefined) return;
        byCall.set(event.callId, { ...asked, ...(asked.status === 'pending' ? { status: 'ended' as const } : {}), resultSeq: event.seq });
      }
    },
    result(): readonly ApprovalAudit[] {
      return [...byCall.values()].sort((a, b) => a.requestedSeq - b.requestedSeq);
    },
  };
};

/**
 * A line per approval for people: `c2 deploy {"target":"prod"} (step 3): approved by ana: reviewed`.
 * @example for (const a of audit.approvals) console.log(describeApproval(a))
 */
export const describeApproval = (a: ApprovalAudit): string => {
  const args = a.arguments.length > 80 ? `${a.arguments.slice(0, 79)}…` : a.arguments;
  const who = a.by !== undefined ? ` by ${a.by}` : '';
  const why = a.reason !== undefined ? `: ${a.reason}` : '';
  const status = a.status === 'pending' ? 'PENDING (waiting for approve / reject)' : a.status === 'ended' ? 'not decided (its run ended)' : `${a.status}${who}${why}`;
  return `${a.callId} ${a.name} ${args} (step ${a.step}): ${status}`;
};

/**
 * The approvals of a session read from the log (those asked at `step` when given), pending and decided.
 * @example const pending = (await approvalsOf(log, 'session-1')).filter((a) => a.status === 'pending')
 */
export const approvalsOf = async (log: SessionEventLog, sessionId: string, options: { readonly step?: number } = {}): Promise<readonly ApprovalAudit[]> => {
  const fold = createApprovalAudit();
  for await (const event of log.read(sessionId)) fold.add(event);
  return fold.result().filter((a) => options.step === undefined || a.step === options.step);
};
