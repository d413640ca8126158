// One LISTEN connection per log: routes append notifications to the subscribers of each session.
import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

/** The notification payload for a session: md5 of its key, so it stays short for any id. */
export const notifyTagOf = (sessionKey: string): string => createHash('md5').update(sessionKey).digest('hex');

export interface SessionListener {
  /** Calls `changed` on every notification for the session; resolves once LISTEN is in place. */
  watch(sessionKey: string, changed: () => void): Promise<() => void>;
  /** Calls the session's watchers now (appends made through this log). */
  poke(sessionKey: string): void;
  close(): Promise<void>;
}

const RECONNECT_MS = 1000;

/**
 * LISTENs on `channel` with one client taken from the pool while anyone watches. When that
 * connection fails, every watcher is woken (they re-read and keep polling) and it reconnects.
 */
export const createSessionListener = (pool: Pool, channel: string): SessionListener => {
  const watchers = new Map<string, Set<() => void>>();
  let client: PoolClient | undefined;
  let connecting: Promise<void> | undefined;
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | undefined;

  const wakeAll = (): void => {
    for (const set of watchers.values()) for (const changed of set) changed();
  };

  const onNotification = (message: { channel: string; payload?: string | undefined }): void => {
    if (message.channel !== channel || message.payload === undefined) return;
    const set = watchers.get(message.payload);
    if (set) for (const changed of set) changed();
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
      let set = watchers.get(tag);
      if (!set) watchers.set(tag, (set = new Set()));
      set.add(changed);
      const stop = (): void => {
        set.delete(changed);
        if (set.size === 0 && watchers.get(tag) === set) watchers.delete(tag);
      };
      try {
        await ensureListening();
      } catch (error) {
        stop();
        throw error;
      }
      return stop;
    },
    poke(sessionKey) {
      const set = watchers.get(notifyTagOf(sessionKey));
      if (set) for (const changed of set) changed();
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await connecting?.catch(() => {});
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
