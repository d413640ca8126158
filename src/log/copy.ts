// copySession: moves a session between any two stores as stored texts, re-verified by the target.
import { ContextLedgerError, InvalidOptionsError } from '../base/errors.js';
import type { SessionEventLog } from './types.js';

/** `copySession`: the target already holds a different history for the session; nothing was copied. */
export class SessionsDivergeError extends ContextLedgerError {
  static override readonly code = 'SESSIONS_DIVERGE';
  constructor(
    readonly sessionId: string,
    readonly seq: number,
  ) {
    super(`session ${JSON.stringify(sessionId)}: the target's event ${seq} differs from the source's; nothing was copied`);
  }
}
/** @deprecated use SessionsDivergeError.isInstance */ export const isSessionsDivergeError = (e: unknown): e is SessionsDivergeError => SessionsDivergeError.isInstance(e);

export interface CopySessionOptions {
  /** Stored texts per `importStored` call (default 1000): memory stays bounded on long sessions. */
  readonly batchSize?: number;
}

export interface CopySessionResult {
  /** Events written to the target by this call. */
  readonly copied: number;
  /** The target's head afterwards. */
  readonly head: number;
}

const lastStored = async (log: SessionEventLog, sessionId: string, seq: number): Promise<string | undefined> => {
  for await (const text of log.readStored(sessionId, { fromSeq: seq, toSeq: seq })) return text;
  return undefined;
};

/**
 * Copies a session's events from one store to another, keeping `at`, `v` and every hash, so the
 * copy verifies and replays like the original. The target re-verifies the chain (`importStored`).
 * When the target already has a prefix of the session (an earlier or interrupted copy), only the
 * rest is copied; a target whose events differ from the source's throws SessionsDivergeError.
 * Works between any two stores: LevelDB, memory, PostgreSQL.
 * @example await copySession(await openLevelLog('./.ledger'), await openPostgresLog({ connectionString }), 's1')
 */
export const copySession = async (
  from: SessionEventLog,
  to: SessionEventLog,
  sessionId: string,
  options: CopySessionOptions = {},
): Promise<CopySessionResult> => {
  const batchSize = options.batchSize ?? 1000;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new InvalidOptionsError('copySession', [{ path: 'batchSize', message: `must be a positive integer, got ${String(batchSize)}` }]);
  const targetHead = await to.head(sessionId);
  if (targetHead > 0) {
    const [mine, theirs] = await Promise.all([lastStored(to, sessionId, targetHead), lastStored(from, sessionId, targetHead)]);
    if (mine === undefined || mine !== theirs) throw new SessionsDivergeError(sessionId, targetHead);
  }
  let copied = 0;
  let head = targetHead;
  let batch: string[] = [];
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const result = await to.importStored(sessionId, batch);
    copied += result.imported;
    head = result.head;
    batch = [];
  };
  for await (const text of from.readStored(sessionId, { fromSeq: targetHead + 1 })) {
    batch.push(text);
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return { copied, head };
};
