// replayContext: the exact items the model was sent at a step, rebuilt from memoryAt and the recorded projector settings.
import type { ContextBudget, ContextProjector } from '../context/index.js';
import type { ComponentRegistry } from '../compact/index.js';
import { createPromptResolver, type SessionEvent, type SessionEventOf } from '../events/index.js';
import type { SessionEventLog } from '../log/index.js';
import { headOf, stateAtSeq, type SessionStateAt } from './memory-at.js';
import { InvalidOptionsError } from '../base/errors.js';
import { ReplayTargetError } from './errors.js';
import { projectMemory, projectionDifferences, projectorOfRecord, recordedRequestBudget, type Reprojection } from './reproject.js';

export interface ReplayContextOptions {
  /** Users' own projectors and tokenizers, by the names they recorded. */
  readonly registry?: ComponentRegistry;
}

export interface ReplayedContext extends Reprojection {
  readonly sessionId: string;
  readonly step: number;
  /** The seq of the step's `context.projected` event. */
  readonly seq: number;
  /** The recorded projection event. */
  readonly recorded: SessionEventOf<'context.projected'>;
  /** The step's `model.requested` event, with its prompt resolved (`systemPrompt`, `tools`) when it referred to an earlier one by `promptSeq`. */
  readonly request?: SessionEventOf<'model.requested'>;
  /** The session state the projection was made from (just before `context.projected`). */
  readonly at: SessionStateAt;
  /** Whether digest, sent ids, fates and report all equal the recording. */
  readonly identical: boolean;
  /** The recorded fields that differ (`digest`, `sent`, `fates`, `report`); empty when identical. */
  readonly differences: readonly string[];
}

/** The step's `context.projected` and `model.requested` events (reads only). */
const stepEvents = async (
  log: SessionEventLog,
  sessionId: string,
  step: number,
): Promise<{ projected?: SessionEventOf<'context.projected'>; requested?: SessionEventOf<'model.requested'> }> => {
  let projected: SessionEventOf<'context.projected'> | undefined;
  // model.requested (v2) names an earlier request's prompt by promptSeq: resolve it, so `request` carries its prompt.
  const prompts = createPromptResolver();
  const iterator = log.read(sessionId)[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      const event: SessionEvent = next.value;
      const prompt = event.type === 'model.requested' ? prompts.resolve(event) : undefined;
      if (!projected) {
        if (event.type === 'context.projected' && event.step === step) projected = event;
      } else if (event.type === 'model.requested' && event.step === step) {
        return { projected, requested: { ...event, ...prompt, tools: [...(prompt?.tools ?? [])] } };
      } else if (event.type === 'step.started' || event.type === 'context.projected') {
        break;
      }
    }
  } finally {
    await iterator.return?.();
  }
  return projected ? { projected } : {};
};

/**
 * The exact items the model was sent at `step`: memory as it was just before the step's `context.projected`
 * (from `memoryAt`), projected again with the recorded projector and budget, and checked against the recorded
 * digest, sent ids, fates and report (`identical`, `differences`). Reads only.
 * @example const { items, identical } = await replayContext(log, 'task-42', { step: 3 })
 */
export const replayContext = async (
  log: SessionEventLog,
  sessionId: string,
  at: { readonly step: number },
  options: ReplayContextOptions = {},
): Promise<ReplayedContext> => {
  await headOf(log, sessionId);
  const step = at?.step;
  if (typeof step !== 'number' || !Number.isInteger(step) || step < 1) throw new InvalidOptionsError('replayContext', [{ path: 'step', message: `must be an integer ≥ 1, got ${JSON.stringify(step)}` }]);
  const { projected, requested } = await stepEvents(log, sessionId, step);
  if (!projected) throw new ReplayTargetError(sessionId, `step ${step} has no recorded context.projected`);
  const state = await stateAtSeq(log, sessionId, projected.seq - 1);
  // A remote tokenizer's counts were recorded with the projection: replay reads them back instead of asking.
  const projector: ContextProjector = projectorOfRecord(projected, options.registry ?? {});
  const again = projectMemory(state.memory, projector, projected.budget as ContextBudget, recordedRequestBudget(projected, projector));
  const differences = projectionDifferences(projected, again);
  return {
    ...again,
    sessionId,
    step,
    seq: projected.seq,
    recorded: projected,
    ...(requested ? { request: requested } : {}),
    at: state,
    identical: differences.length === 0,
    differences,
  };
};
