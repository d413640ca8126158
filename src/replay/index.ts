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
export { reportData } from './report/data.js';
export type { ReportData, ReportItem, ReportStep } from './report/data.js';
export { renderReport } from './report/html.js';
