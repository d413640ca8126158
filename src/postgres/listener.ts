// Change signals for subscribers: one LISTEN connection per log for appends that notify, and one head poll for all watched sessions.
import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

/** The notification payload for a session: md5 of its key, so it stays short for any id. */
export const notifyTagOf = (sessionKey: string): string => createHash('md5').update(sessionKey).digest('hex');

export interface SessionListener {
  /** Calls `changed` on every notification for the session and whenever a poll finds its head moved; resolves once LISTEN is in place. */
  watch(sessionKey: string, changed: () => void): Promise<() => void>;
  /** Calls the watchers of the session with this notify tag now (appends made through this log). */
  poke(notifyTag: string): void;
  close(): Promise<void>;
}

export interface SessionListenerOptions {
  /** The LISTEN/NOTIFY channel of the schema. */
  readonly channel: string;
  /** How often the heads of every watched session are read (one statement for all of them). */
  readonly pollMs: number;
  /** `SELECT session_key, head_seq FROM sessions WHERE session_key = ANY($1::text[])`, prepared under `headsName`. */
  readonly headsSql: string;
  readonly headsName: string;
}

interface Watched {
  readonly key: string;
  readonly changed: Set<() => void>;
  /** The head the last poll saw (undefined until a poll has seen it: the first sighting wakes). */
  seen: string | undefined;
}

const RECONNECT_MS = 1000;

/**
 * LISTENs on the channel with one client taken from the pool while anyone watches. When that
 * connection fails, every watcher is woken (they re-read) and it reconnects. Independently, every
 * `pollMs` one statement reads the heads of all watched sessions and wakes the watchers of each
 * session whose head moved: appends from writers that do not notify (`notify: false`), and any
 * notification lost with a connection, are found that way.
 */
export const createSessionListener = (pool: Pool, options: SessionListenerOptions): SessionListener => {
  const { channel, pollMs, headsSql, headsName } = options;
  /** By notify tag (md5 of the session key). */
  const watchers = new Map<string, Watched>();
  let client: PoolClient | undefined;
  let connecting: Promise<void> | undefined;
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  let polling: Promise<void> | undefined;
  /** A poll's statement is in flight: no second one is scheduled beside it. */
  let inPoll = false;

  const wake = (watched: Watched | undefined): void => {
    if (watched) for (const changed of watched.changed) changed();
  };
  const wakeAll = (): void => {
    for (const watched of watchers.values()) wake(watched);
  };

  const pollHeads = async (): Promise<void> => {
    pollTimer = undefined;
    const watched = [...watchers.values()];
    if (closed || watched.length === 0) return;
    inPoll = true;
    try {
      const result = await pool.query({ name: headsName, text: headsSql, values: [watched.map((w) => w.key)], rowMode: 'array' });
      const heads = new Map((result.rows as [string, string][]).map(([key, seq]) => [key, String(seq)]));
      for (const w of watched) {
        const head = heads.get(w.key) ?? '0';
        if (head !== w.seen) {
          w.seen = head;
          wake(w);
        }
      }
    } catch {
      // Wake them all: each re-reads, so a database that stays away (or tables that are gone) reaches
      // the subscribers as the error of their read instead of a silent wait; a passing fault costs a read.
      for (const w of watched) wake(w);
    } finally {
      inPoll = false;
    }
    schedulePoll();
  };

  // Not unref'd: like a LISTEN connection, a pending poll keeps a process that follows a session alive.
  const schedulePoll = (): void => {
    if (closed || pollTimer || inPoll || watchers.size === 0) return;
    pollTimer = setTimeout(() => {
      polling = pollHeads().finally(() => {
        polling = undefined;
      });
    }, pollMs);
  };

  const onNotification = (message: { channel: string; payload?: string | undefined }): void => {
    if (message.channel !== channel || message.payload === undefined) return;
    wake(watchers.get(message.payload));
  };

  const drop = (failed: PoolClient, error?: unknown): void => {
    if (client !== failed) return;
    client = undefined;
    failed.removeListener('notification', onNotification);
    failed.release(error instanceof Error ? error : true);
    wakeAll();
    if (!closed && watchers.size > 0 && !retry) {
      retry = setTimeout(() => {
        retry = undefined;
        if (!closed && watchers.size > 0) void ensureListening().catch(() => {});
      }, RECONNECT_MS);
      retry.unref?.();
    }
  };

  const ensureListening = (): Promise<void> => {
    if (client) return Promise.resolve();
    connecting ??= (async () => {
      const fresh = await pool.connect();
      try {
        fresh.on('notification', onNotification);
        fresh.on('error', (error) => drop(fresh, error));
        await fresh.query(`LISTEN "${channel}"`);
      } catch (error) {
        fresh.removeListener('notification', onNotification);
        fresh.release(error instanceof Error ? error : true);
        throw error;
      }
      if (closed) {
        fresh.release(true);
        return;
      }
      client = fresh;
      wakeAll(); // anything appended while no connection listened is read now
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  };

  return {
    async watch(sessionKey, changed) {
      const tag = notifyTagOf(sessionKey);
      let watched = watchers.get(tag);
      if (!watched) watchers.set(tag, (watched = { key: sessionKey, changed: new Set(), seen: undefined }));
      const entry = watched;
      entry.changed.add(changed);
      const stop = (): void => {
        entry.changed.delete(changed);
        if (entry.changed.size === 0 && watchers.get(tag) === entry) watchers.delete(tag);
        if (watchers.size === 0 && pollTimer) {
          clearTimeout(pollTimer);
          pollTimer = undefined;
        }
      };
      try {
        await ensureListening();
      } catch (error) {
        stop();
        throw error;
      }
      schedulePoll();
      return stop;
    },
    poke(notifyTag) {
      wake(watchers.get(notifyTag));
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      if (pollTimer) clearTimeout(pollTimer);
      pollTimer = undefined;
      await Promise.all([connecting?.catch(() => {}), polling]);
      wakeAll();
      watchers.clear();
      const current = client;
      client = undefined;
      if (current) {
        current.removeListener('notification', onNotification);
        await current.query(`UNLISTEN "${channel}"`).catch(() => {});
        current.release();
      }
    },
  };
};
