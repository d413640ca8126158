// The model call of a step, streamed when the run asks (`onDelta`) and the client can; the answer is the stream's `finish` part.
import { errorText } from '../base/index.js';
import type { ModelRequest, ModelResult, ModelStreamPart } from '../model/index.js';
import { ModelStreamError } from './errors.js';
import type { TurnContext } from './hooks.js';
import type { StepAgent } from './step-session.js';

/** A part of a streamed answer that is not the answer itself: text, reasoning or a call's arguments as they arrive. */
export type ModelDelta = Exclude<ModelStreamPart, { readonly type: 'finish' }>;

/** Told each delta of a streamed answer; a throw is ignored (display must not break the run). */
export type DeltaListener = (delta: ModelDelta, context: TurnContext) => void;

const isRecordLike = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object';

/**
 * The model's answer to `request`: `modelClient.create`, or, with `onDelta` and a client that has `stream`, the
 * `finish` part of its stream (each delta told to `onDelta` and to the host as `MODEL_DELTA`). A stream that ends
 * without `finish`, or sends a part of unknown type, fails with a `ModelStreamError`; nothing of it is kept.
 * @example const result = await answerOfModel(agent, turn, request, signal, (d) => process.stdout.write(d.type === 'text-delta' ? d.delta : ''))
 */
export const answerOfModel = async (
  agent: StepAgent,
  turn: TurnContext,
  request: ModelRequest,
  signal: AbortSignal,
  onDelta: DeltaListener | undefined,
): Promise<ModelResult> => {
  const client = agent.options.modelClient;
  if (onDelta === undefined || typeof client.stream !== 'function') return client.create(request, { signal });
  let finished: ModelResult | undefined;
  for await (const part of client.stream(request, { signal }) as AsyncIterable<unknown>) {
    signal.throwIfAborted();
    if (!isRecordLike(part)) throw new ModelStreamError(`the stream sent ${errorText(part)} where a part was expected`);
    if (finished !== undefined) throw new ModelStreamError(`the stream sent a ${String(part['type'])} part after its finish part`);
    switch (part['type']) {
      case 'finish':
        if (!isRecordLike(part['result'])) throw new ModelStreamError('the finish part has no result');
        finished = part['result'] as unknown as ModelResult;
        break;
      case 'text-delta':
      case 'reasoning-delta':
      case 'tool-call-delta': {
        const delta = part as unknown as ModelDelta;
        try {
          onDelta(delta, turn);
        } catch {
          // a display must not break the run
        }
        agent.notify({ type: 'MODEL_DELTA', sessionId: turn.sessionId, runId: turn.runId, step: turn.step, delta });
        break;
      }
      default:
        throw new ModelStreamError(`the stream sent a part of unknown type ${JSON.stringify(part['type'])}`);
    }
  }
  signal.throwIfAborted();
  if (finished === undefined) throw new ModelStreamError('the stream ended without a finish part (the answer is incomplete)');
  return finished;
};
