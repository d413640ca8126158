// What the model is sent at a step, computed in one place: the runtime, the bridges, replay and the runtime laws all
// project a step with projectStep and record it with contextProjectedEvent (issue 25 item 2).
import type { ContextBudget, ContextProjector, RequestAllowance, Tokenizer } from '../context/index.js';
import { projectForModel, reportFateRuns, reportWithoutFates } from '../context/index.js';
import type { ComponentDescription, NewSessionEventOf } from '../events/index.js';
import { digestOf } from '../base/index.js';
import type { MemoryItem } from '../items/index.js';
import { projectRequest, type ProjectRequestOptions, type RequestProjection } from './request-budget.js';
import type { RecordedRequest } from './request-allowance.js';

/** How a step's whole request is budgeted: what comes off `maxTokens`, the tokenizer that counted it, where the working memory is. */
export interface StepRequestBudget {
  readonly allowance: RequestAllowance;
  readonly tokenizer: Tokenizer;
  readonly options?: ProjectRequestOptions;
}

/** A step's projection: what is sent and its report, the digest `context.projected` and `model.requested` carry, and the fates as runs. */
export interface StepProjection extends RequestProjection {
  /** `digestOf(items)`: what `context.projected.digest` and `model.requested.digest` record. */
  readonly digest: string;
  /** The report's fates as runs over the `sourceCount` items projected (`context.projected.fateRuns`), built when first read. */
  readonly fateRuns: string;
  /** How many items were projected (memory's visible items). */
  readonly sourceCount: number;
}

/**
 * Projects a step's items as the runtime sends them: the projector, then no tool item without its call or output
 * (rule `orphan`), within the whole request when `request` is given ({@link projectRequest}), else within the items'
 * budget alone. Pure and deterministic: replay and the laws call it with what the step recorded.
 * @example const step = projectStep(agent.projector, memory.getItems(), budget); step.digest
 */
export const projectStep = (projector: ContextProjector, items: readonly MemoryItem[], budget: ContextBudget, request?: StepRequestBudget): StepProjection => {
  const projection: RequestProjection = request
    ? projectRequest(projector, items, budget, request.allowance, request.tokenizer, request.options)
    : projectForModel(projector, items, budget);
  let fateRuns: string | undefined;
  return {
    items: projection.items,
    report: projection.report,
    ...(projection.workingMemoryTokens !== undefined ? { workingMemoryTokens: projection.workingMemoryTokens } : {}),
    digest: digestOf(projection.items),
    // A replay that finds a step identical by its digest never reads the fates: their runs are built on demand.
    get fateRuns() {
      return (fateRuns ??= reportFateRuns(projection.report, items.length));
    },
    sourceCount: items.length,
  };
};

/** Where and how a step was projected: what `context.projected` records beside the projection itself. */
export interface ProjectedAt {
  readonly step: number;
  readonly runId?: string | undefined;
  /** The projector's description (`describe()`), recorded so a replay can rebuild it. */
  readonly projector: ComponentDescription;
  /** The budget projected with. */
  readonly budget: ContextBudget;
  /** Token counts a remote tokenizer made of memory's texts for this step (replay counts with them). */
  readonly tokenCounts?: Record<string, number> | undefined;
  /** What was taken off `maxTokens` for the whole request (`context.projected.request`). */
  readonly request?: RecordedRequest | undefined;
}

/**
 * The `context.projected` event of a step's projection: the one builder the runtime and the bridges record with
 * (the report without its fates, which go as runs; the tokenizer's name from the projector's description).
 * @example await session.record([contextProjectedEvent({ step: 1, projector: projector.describe(), budget }, projectStep(projector, items, budget))]);
 */
export const contextProjectedEvent = (at: ProjectedAt, projection: StepProjection): NewSessionEventOf<'context.projected'> => {
  const tokenizer = at.projector.settings['tokenizer'];
  const report = reportWithoutFates(projection.report);
  return {
    type: 'context.projected',
    step: at.step,
    ...(at.runId !== undefined ? { runId: at.runId } : {}),
    projector: at.projector,
    budget: { ...at.budget },
    ...(typeof tokenizer === 'string' ? { tokenizer } : {}),
    report,
    fateRuns: projection.fateRuns,
    digest: projection.digest,
    ...(at.tokenCounts !== undefined ? { tokenCounts: at.tokenCounts } : {}),
    ...(at.request !== undefined ? { request: at.request } : {}),
  };
};
