// Public face of replay: time travel (memoryAt), what the model saw (replayContext), replaySession, forkSession, audit and the report.
export { memoryAt } from './memory-at.js';
export type { SessionPoint, SessionStateAt } from './memory-at.js';
export { replayContext } from './replay-context.js';
export type { ReplayContextOptions, ReplayedContext } from './replay-context.js';
export { projectMemory, projectionDifferences, projectorOfRecord } from './reproject.js';
export type { Reprojection } from './reproject.js';
export { RecordedError, ReplayDivergenceError, ReplayTargetError, isRecordedError, isReplayDivergenceError, isReplayTargetError } from './errors.js';
export { compareProjections, replaySession } from './replay-session.js';
export type { Divergence, ReplayOptions, ReplayResult } from './types.js';
export { DEFAULT_REPLAY_MAX_CODE_TIMEOUT_MS } from './types.js';
export { FIELDS_A_RERUN_MAY_CHANGE } from './rerun.js';
export { forkSession } from './fork.js';
export type { ForkPoint, ForkResult } from './fork.js';
export { AuditError, auditItem, auditSession, auditUsageDrift, isAuditError, streamAudit } from './audit.js';
export { approvalsOf, createApprovalAudit, describeApproval } from './approvals.js';
export type { ApprovalAudit } from './approvals.js';
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
  StepDrift,
} from './audit.js';
export { PriceTableSchema, costOf, parsePriceTable, priceOf, usageFigures } from './accounting.js';
export type { AccountTotals, CacheablePrefix, CompactionAccount, ModelPrice, PriceTable, StepAccount, UsageFigures, UsageTotals } from './accounting.js';
export { reportData } from './report/data.js';
export type { ReportData, ReportDataOptions, ReportExtras, ReportItem, ReportModelCall, ReportPrices, ReportStep } from './report/data.js';
export { renderReport } from './report/html.js';
