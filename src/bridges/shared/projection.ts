// What every bridge does before a model call: project the session's memory and record `context.projected` and `model.requested`.
import { DefaultContextProjector, parseContextBudget } from '../../context/index.js';
import type { ContextBudget, ContextProjection, ContextProjector } from '../../context/index.js';
import type { NewSessionEvent } from '../../events/index.js';
import { contextProjectedEvent, projectStep } from '../../runtime/index.js';
import type { MemoryItem } from '../../items/index.js';
import type { AgentSession } from '../../session/index.js';

/** How a bridge projects: the projector (default `new DefaultContextProjector()`) and the budget (default unlimited). */
export interface BridgeProjectionOptions {
  readonly contextProjector?: ContextProjector;
  readonly contextBudget?: ContextBudget;
}

/** A projector and a checked budget, ready for {@link recordProjection}. */
export interface ResolvedProjection {
  readonly projector: ContextProjector;
  readonly budget: ContextBudget;
}

/** The projector and budget of the options, the budget checked now (a bad budget throws here, not at the first step). */
export const resolveProjection = (options: BridgeProjectionOptions): ResolvedProjection => ({
  projector: options.contextProjector ?? new DefaultContextProjector(),
  budget: parseContextBudget(options.contextBudget ?? {}),
});

/** Where the projection is recorded: the step, the run, and the model that will be called. */
export interface ProjectionStep {
  readonly step: number;
  readonly runId?: string | undefined;
  readonly model: string;
  readonly systemPrompt?: string | undefined;
  readonly tools?: readonly Record<string, unknown>[];
  /** The call settings the framework sends (recorded as `model.requested.settings` when given). */
  readonly settings?: Record<string, unknown> | undefined;
}

/** The `model.requested` a bridge records for a request it saw: the prompt (system, tools) and settings as sent. */
export const modelRequestedEvent = (step: ProjectionStep, itemCount: number, digest: string): NewSessionEvent => ({
  type: 'model.requested',
  step: step.step,
  ...(step.runId !== undefined ? { runId: step.runId } : {}),
  model: step.model,
  ...(step.systemPrompt !== undefined ? { systemPrompt: step.systemPrompt } : {}),
  tools: (step.tools ?? []).map((t) => ({ ...t })),
  itemCount,
  digest,
  ...(step.settings !== undefined && Object.keys(step.settings).length > 0 ? { settings: { ...step.settings } } : {}),
});

/**
 * Projects the session's memory and records `context.projected` (ids sent, fates, projector, budget,
 * digest) then, unless `request` is false (the bridge records it when it sees the request), `model.requested`
 * (same digest), as the runtime does before each model call; returns the projection, whose items are what the
 * model must be sent, and its digest.
 */
export const recordProjection = async (
  session: AgentSession,
  { projector, budget }: ResolvedProjection,
  step: ProjectionStep,
  { request = true }: { readonly request?: boolean } = {},
): Promise<ContextProjection & { readonly items: readonly MemoryItem[]; readonly digest: string }> => {
  // As the runtime does (the same function): the projector, then no orphan tool item (rule `orphan`).
  const projection = projectStep(
    projector,
    session.memory.getEntries().map((e) => e.item),
    budget,
  );
  await session.record([
    contextProjectedEvent({ step: step.step, runId: step.runId, projector: projector.describe(), budget }, projection),
    ...(request ? [modelRequestedEvent(step, projection.items.length, projection.digest)] : []),
  ]);
  return { items: projection.items, report: projection.report, digest: projection.digest };
};
