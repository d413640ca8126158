// Public face of replay: audit (and, from the replay work, memoryAt, replayContext, replaySession, forkSession).
export { AuditError, auditItem, auditSession, isAuditError, streamAudit } from './audit.js';
export type {
  AuditOptions,
  AuditRecord,
  AuditTotals,
  CompactionAudit,
  FateCounts,
  FateSpan,
  ItemAudit,
  ItemExit,
  SessionAudit,
  StepAudit,
} from './audit.js';
