// `events --follow`: a session's events as they are appended. PostgreSQL: the store's own subscribe (a head poll and
// LISTEN/NOTIFY, plus catch-up reads). A LevelDB directory: read a fresh snapshot copy whenever the directory changed
// (checked every 250 ms, and at once again while reads find events), so following never takes the directory's lock
// (an agent can start, or keep writing, while someone watches) and keeps up with a busy writer.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Level } from 'level';
import type { SessionEvent } from '../events/index.js';
import { createStoreLog, followSession, type StringLevel } from '../log/index.js';
import { isPostgresUrl, openForRead } from './ledger.js';
import { snapshotLevelDir } from './snapshot.js';

/** How often an idle LevelDB directory is checked for changes while following (a stat of its files; no copy unless one changed). */
export const FOLLOW_POLL_MS = 250;

/** What the directory's files are now (names, sizes, modification times): any append changes it. */
const signatureOf = async (dir: string): Promise<string> => {
  const names = (await readdir(dir)).filter((n) => n !== 'LOCK' && n !== 'LOG' && n !== 'LOG.old').sort();
  const parts: string[] = [];
  for (const name of names) {
    try {
      const info = await stat(join(dir, name));
      parts.push(`${name}:${info.size}:${info.mtimeMs}`);
    } catch {
      parts.push(`${name}:gone`);
    }
  }
  return parts.join('|');
};

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
  note(`following ${sessionId} in ${dir}: reading a snapshot whenever it changes (checked every ${FOLLOW_POLL_MS} ms; Ctrl-C to stop)`);
  let again: (() => void) | undefined;
  let readAt: string | undefined;
  const readFrom = async function* (from: number): AsyncGenerator<SessionEvent> {
    // Unchanged since the last snapshot was read: nothing new. Taken before the copy, so a change during it is seen next time.
    const signature = await signatureOf(dir);
    if (signature === readAt) return;
    let read = 0;
    for await (const event of readSnapshot(dir, sessionId, from)) {
      read += 1;
      yield event;
    }
    readAt = signature;
    if (read > 0) again?.(); // the writer is busy: read on at once rather than after a poll
  };
  yield* followSession(
    sessionId,
    { fromSeq, signal },
    {
      readFrom,
      watch: (changed) => {
        again = changed;
        return () => {
          again = undefined;
        };
      },
      isClosed: () => false,
      pollMs: FOLLOW_POLL_MS,
    },
  );
}
