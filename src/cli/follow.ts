// `events --follow`: a session's events as they are appended. PostgreSQL: the store's own subscribe (a head poll and
// LISTEN/NOTIFY, plus catch-up reads). A LevelDB directory: re-read a fresh snapshot copy once a second, so following never takes
// the directory's lock (an agent can start, or keep writing, while someone watches).
import { Level } from 'level';
import type { SessionEvent } from '../events/index.js';
import { createStoreLog, followSession, type StringLevel } from '../log/index.js';
import { isPostgresUrl, openForRead } from './ledger.js';
import { snapshotLevelDir } from './snapshot.js';

/** How often a LevelDB directory is re-read while following. */
export const FOLLOW_POLL_MS = 1_000;

/** Reads `sessionId` from `fromSeq` on out of a snapshot copy of `dir`, then removes the copy. */
async function* readSnapshot(dir: string, sessionId: string, fromSeq: number): AsyncGenerator<SessionEvent> {
  const snapshot = await snapshotLevelDir(dir);
  try {
    const db = new Level<string, string>(snapshot.dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open({ createIfMissing: false });
    const log = createStoreLog(db as unknown as StringLevel, {});
    try {
      const head = await log.head(sessionId);
      if (head >= fromSeq) yield* log.read(sessionId, { fromSeq });
    } finally {
      await log.close();
    }
  } finally {
    await snapshot.remove();
  }
}

/**
 * The events of `sessionId` from `fromSeq` on, catch-up then live, until `signal` aborts.
 * @example for await (const e of followLedger('./.ledger', 's1', 1, signal, console.error)) console.log(e.seq)
 */
export async function* followLedger(
  dir: string,
  sessionId: string,
  fromSeq: number,
  signal: AbortSignal,
  note: (message: string) => void,
): AsyncGenerator<SessionEvent> {
  if (isPostgresUrl(dir)) {
    const ledger = await openForRead(dir, note);
    try {
      yield* ledger.log.subscribe(sessionId, { fromSeq, signal });
    } finally {
      await ledger.close();
    }
    return;
  }
  note(`following ${sessionId} in ${dir}: re-reading a snapshot every ${FOLLOW_POLL_MS / 1000} s (Ctrl-C to stop)`);
  yield* followSession(
    sessionId,
    { fromSeq, signal },
    {
      readFrom: (from) => readSnapshot(dir, sessionId, from),
      watch: () => () => {},
      isClosed: () => false,
      pollMs: FOLLOW_POLL_MS,
    },
  );
}
