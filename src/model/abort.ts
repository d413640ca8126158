// untilAborted: races work that may ignore an AbortSignal (a model client, a tool, a policy) against that signal.
import { ContextLedgerError } from '../base/errors.js';

/**
 * A run was aborted while a model call, a tool or a summarizer that ignores its signal was still running: the run did
 * not wait, and whatever the work produces later is ignored. `cause` is the signal's reason.
 */
export class AbandonedWorkError extends ContextLedgerError {
  static override readonly code = 'WORK_ABANDONED';
  constructor(
    /** What was abandoned: 'the model call', 'tool "bash"', … */
    readonly what: string,
    reason: unknown,
  ) {
    super(`aborted while ${what} ran; its late result will be ignored`, { cause: reason });
  }
}
/** @deprecated use AbandonedWorkError.isInstance */ export const isAbandonedWorkError = (e: unknown): e is AbandonedWorkError => AbandonedWorkError.isInstance(e);

/**
 * Settles as `work` does, unless `signal` aborts first: then, if `work` has not settled by the next turn of the
 * event loop (so work that finishes as the abort happens is kept), it rejects with an {@link AbandonedWorkError}
 * and `work`'s late result or rejection is dropped. An already aborted signal still lets work that settles at once win.
 * @example const result = await untilAborted(client.create(request, { signal }), signal, 'the model call')
 */
export const untilAborted = <T>(work: PromiseLike<T>, signal: AbortSignal | undefined, what = 'the work'): Promise<T> => {
  const settled = Promise.resolve(work);
  if (!signal) return settled;
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const onAbort = (): void => {
      setImmediate(() => {
        if (done) return;
        done = true;
        reject(new AbandonedWorkError(what, signal.reason));
      });
    };
    settled.then(
      (value) => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
};
