// A tool call raced against a signal: when the signal wins, the call is abandoned and its late outcome ignored.
import { errorText } from '../base/index.js';
import type { ToolOutcome } from './tools.js';

/**
 * The outcome of `call`, or an `Error: abandoned: …` outcome as soon as `signal` aborts (the tool may
 * go on running; what it returns later is ignored, so nothing is recorded after its caller moved on).
 * @example await outcomeUnlessAbandoned(runTool(tool, name, args, context), deadlineSignal)
 */
export const outcomeUnlessAbandoned = (call: Promise<ToolOutcome>, signal: AbortSignal | undefined): Promise<ToolOutcome> => {
  const abandoned = (): ToolOutcome => ({ output: `Error: abandoned: ${errorText(signal?.reason)}`, isError: true });
  if (!signal) return call;
  if (signal.aborted) return Promise.resolve(abandoned());
  return new Promise<ToolOutcome>((resolve, reject) => {
    const onAbort = (): void => resolve(abandoned());
    signal.addEventListener('abort', onAbort, { once: true });
    call.then(
      (outcome) => {
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
};
