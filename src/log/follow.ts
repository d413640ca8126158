// Live tailing for any store: catch up by seq from the log, then re-read from the next seq on each change signal.
import type { SessionEvent } from '../events/index.js';
import { InvalidOptionsError } from '../base/errors.js';
import { ChainBrokenError, InvalidSessionIdError } from './errors.js';
import type { SubscribeOptions } from './types.js';

/** What a store gives `followSession`. */
export interface FollowSource {
  /** Reads the session's stored events from `fromSeq` on (inclusive), in seq order, gap-free. */
  readFrom(fromSeq: number): AsyncIterable<SessionEvent>;
  /**
   * Starts calling `changed` whenever the session may have new events (spurious calls are harmless)
   * and resolves once it is listening; the function it resolves to stops it.
   */
  watch(changed: () => void): Promise<() => void> | (() => void);
  /** True once the store is closed: the subscription then ends. */
  isClosed(): boolean;
  /** Re-reads this often even without a change signal (a backstop for lost notifications); 0 = never. */
  readonly pollMs?: number;
}

/**
 * The iterable behind `subscribe`. The watcher is in place before the first read, and every read
 * starts at the seq after the last event yielded, so nothing is missed or repeated between catch-up
 * and live events. A change that arrives during a read makes the loop read again before it waits.
 */
export const followSession = (sessionId: string, options: SubscribeOptions, source: FollowSource): AsyncIterable<SessionEvent> => ({
  [Symbol.asyncIterator]: () => follow(sessionId, options, source),
});

async function* follow(sessionId: string, options: SubscribeOptions, source: FollowSource): AsyncGenerator<SessionEvent, void, undefined> {
  if (typeof sessionId !== 'string' || sessionId.length === 0) throw new InvalidSessionIdError(sessionId);
  const fromSeq = options.fromSeq ?? 1;
  if (!Number.isInteger(fromSeq) || fromSeq < 0) throw new InvalidOptionsError('subscribe', [{ path: 'fromSeq', message: `must be a non-negative integer, got ${String(fromSeq)}` }]);
  const signal = options.signal;
  let next = Math.max(1, fromSeq);
  let version = 0;
  let wake: (() => void) | undefined;
  const changed = (): void => {
    version += 1;
    wake?.();
  };
  const ended = (): boolean => signal?.aborted === true || source.isClosed();
  if (ended()) return;
  const stop = await source.watch(changed);
  signal?.addEventListener('abort', changed);
  try {
    for (;;) {
      if (ended()) return;
      const seen = version;
      try {
        for await (const event of source.readFrom(next)) {
          if (event.seq !== next) throw new ChainBrokenError(sessionId, next, `subscribe expected seq ${next} but read ${event.seq}`);
          next += 1;
          yield event;
          if (ended()) return;
        }
      } catch (error) {
        if (source.isClosed()) return; // the log closed under the read: the subscription ends
        throw error;
      }
      if (version !== seen) continue;
      await new Promise<void>((resolve) => {
        const timer = source.pollMs ? setTimeout(resolve, source.pollMs) : undefined;
        wake = () => {
          if (timer) clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    signal?.removeEventListener('abort', changed);
    stop();
  }
}
