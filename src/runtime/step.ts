// One step of the loop as named stages (start, compact, project, request, respond, run tools, end), each recording its events in that order.
import {
  approxTokenizer,
  isPrefetchingTokenizer,
  projectorTokenizer as projectorTokenizerOf,
  providerTextsOf,
  tokenizerFromName,
  type ContextBudget,
  type ContextProjection,
  type Tokenizer,
} from '../context/index.js';
import { type ComponentDescription } from '../events/index.js';
import { canonicalJson, errorText } from '../base/index.js';
import { assistantMessage, isMessage, lastAssistantMessage, textOf, type MemoryItem } from '../items/index.js';
import { ContextOverflowError, untilAborted, type ModelRequest, type ToolSpec } from '../model/index.js';
import { AgentRunError } from './errors.js';
import type { TurnContext } from './hooks.js';
import { normalizeModelAnswer } from './normalize.js';
import { DEFAULT_OVERFLOW_RETRIES, tighterBudgetAfterOverflow } from './overflow.js';
import { runToolCalls, type PendingApproval } from './run-tools.js';
import { answerOfModel, type DeltaListener } from './stream.js';
import { answerUnansweredCalls, deferEvents, flushEvents, recordEvents, runHook, type StepAnswer, type StepSession } from './step-session.js';
import { toolSpec, type Tool } from './tools.js';
import { budgetPinningWorkingMemory, memoryToolCompactOptions } from './memory-tools/step-hooks.js';
import { requestAllowanceOf, tokenizerOfProjector, type RecordedRequest } from './request-allowance.js';
import { contextProjectedEvent, projectStep } from './project-step.js';
import { workingMemoryIndex } from '../memory/index.js';

/** A step's system prompt and tools (the run's phase decides them). */
export interface StepPlan {
  readonly systemPrompt: string | undefined;
  readonly tools: readonly Tool[];
}

export interface StepOutcome {
  readonly toolCalls: number;
  readonly outputText: string;
  readonly items: readonly MemoryItem[];
  /** Calls of the answer that wait for approval (the run is interrupted after this step); empty when none. */
  readonly pending?: readonly PendingApproval[];
}

/** What one run passes to its steps: `onDelta` streams the model's answer when the client can. */
export interface StepRunOptions {
  readonly onDelta?: DeltaListener | undefined;
}

/** How the agent's projector describes itself this step, and the tokenizer it names (recorded with the projection). */
interface ProjectorOfStep {
  readonly description: ComponentDescription;
  readonly tokenizer: string | undefined;
}

/** The canonical JSON of a request's prompt, to see whether it changed since the last one recorded. */
const promptKey = (systemPrompt: string | undefined, tools: readonly unknown[]): string => canonicalJson({ systemPrompt: systemPrompt ?? null, tools });

/** Start: `step.started`, then the `beforeTurn` hook. */
const startStep = async (s: StepSession, turn: TurnContext): Promise<void> => {
  await deferEvents(s, [{ type: 'step.started', runId: turn.runId, step: turn.step }]);
  await runHook(s, 'beforeTurn', turn);
};

const projectorOfStep = (s: StepSession): ProjectorOfStep => {
  const description = s.agent.projector.describe();
  const tokenizerName = description.settings['tokenizer'];
  return { description, tokenizer: typeof tokenizerName === 'string' ? tokenizerName : undefined };
};

/** Compact: the agent's policy (when due), then an error result for every call left unanswered. */
const compactMemory = async (s: StepSession, turn: TurnContext, projector: ProjectorOfStep, signal: AbortSignal): Promise<void> => {
  // The session's last reported input tokens (across runs, from the fold; a compaction, restore, clear or rewind drops them).
  const lastInputTokens = s.session.state().run.usage?.lastInputTokens;
  const compactOptions = {
    step: turn.step,
    signal,
    tokenizer: (projector.tokenizer !== undefined ? tokenizerFromName(projector.tokenizer) : undefined) ?? approxTokenizer,
    ...(lastInputTokens !== undefined ? { lastInputTokens } : {}),
    ...memoryToolCompactOptions(s),
  };
  // A compaction the agent asked for (the compact tool) runs instead of the automatic check.
  const requested = s.session.state().run.requestedCompaction;
  // beforeCompact is user code that may look at the log: it sees the step's start stored, as every hook does.
  if (s.agent.options.hooks?.beforeCompact && (requested || s.agent.options.compactPolicy)) await flushEvents(s);
  if (requested) await s.session.compactRequested(s.agent.options.compactPolicy, { ...compactOptions, ...(requested.instructions !== undefined ? { instructions: requested.instructions } : {}) });
  else await s.session.autoCompactIfNecessary(s.agent.options.compactPolicy, compactOptions);
  signal.throwIfAborted();
  // After compaction, so a policy that keeps a call but not its output cannot leave it unanswered.
  await answerUnansweredCalls(s, turn.step, 'the run was interrupted before this call ran');
};

/** `context.projected.request`: what was taken off maxTokens, with the working memory's tokens when it was sent as overhead (computed again by a re-run). */
const requestRecordOf = (recorded: RecordedRequest, workingMemoryTokens: number | undefined): RecordedRequest => {
  const { workingMemoryTokens: _recorded, ...rest } = recorded;
  return workingMemoryTokens !== undefined ? { ...rest, workingMemoryTokens } : rest;
};

/** Project: memory through the projector within the budget, recorded as `context.projected` and told to the host. */
const projectStage = async (
  s: StepSession,
  turn: TurnContext,
  projector: ProjectorOfStep,
  signal: AbortSignal,
  plan: StepPlan,
  stepBudget: ContextBudget = s.agent.budget,
): Promise<{ readonly projection: ContextProjection; readonly digest: string }> => {
  const { agent } = s;
  const entries = s.session.memory.getEntries();
  // A remote tokenizer (count_tokens) counts memory's texts now: projection is synchronous.
  const projectorTokenizer = projectorTokenizerOf(agent.projector, { named: false });
  let tokenCounts: Record<string, number> | undefined;
  if (projectorTokenizer && isPrefetchingTokenizer(projectorTokenizer)) {
    const texts = providerTextsOf(entries.map((e) => e.item));
    await projectorTokenizer.prefetch(texts, { signal });
    tokenCounts = projectorTokenizer.countsOf(texts);
  }
  // The whole request in the budget: the prompt's and tools' overhead (and a calibration margin) off maxTokens.
  // A remote tokenizer's counts cover memory's texts only: the overhead and framing are counted with approx.
  const countingTokenizer = tokenCounts !== undefined ? approxTokenizer : tokenizerOfProjector(projectorTokenizer, projector.tokenizer);
  const allowance = requestAllowanceOf(s, turn, plan, countingTokenizer);
  // Any projector, then no tool output without its call (nor call without output): rule `orphan`.
  // Working-memory blocks are pinned: the budget recorded is the one projected with. Within the whole request they are
  // sent whatever the limits and counted like the system prompt (a re-run of a step recorded before that: as it was).
  const state = s.session.memory.state();
  const budget = budgetPinningWorkingMemory(stepBudget, state);
  const blocksAsOverhead = allowance !== undefined && (!allowance.replayed || allowance.recorded.workingMemoryTokens !== undefined);
  const projection = projectStep(
    agent.projector,
    entries.map((e) => e.item),
    budget,
    allowance ? { allowance: allowance.allowance, tokenizer: countingTokenizer, options: blocksAsOverhead ? { workingMemoryIndex: workingMemoryIndex(state) } : {} } : undefined,
  );
  const digest = projection.digest;
  // Stored with model.requested (the host is told of the report once it is stored, right after its event). Fates go
  // as runs over memory's items (ids are memory's at this seq): their size grows with fate changes, not memory.
  await deferEvents(s, [
    contextProjectedEvent(
      {
        step: turn.step,
        runId: turn.runId,
        projector: projector.description,
        budget,
        ...(tokenCounts !== undefined ? { tokenCounts } : {}),
        ...(allowance ? { request: requestRecordOf(allowance.recorded, projection.workingMemoryTokens) } : {}),
      },
      projection,
    ),
  ], () => {
    agent.notify({ type: 'CONTEXT_PROJECTED', sessionId: turn.sessionId, runId: turn.runId, step: turn.step, report: projection.report });
    agent.notify({ type: 'MEMORY_COMPRESS', sessionId: turn.sessionId, runId: turn.runId, step: turn.step, report: projection.report });
  });
  return { projection, digest };
};

/** Request: the request from the projection, the `beforeModelRequest` hook, then `model.requested` (the prompt only when it changed). */
const requestModel = async (
  s: StepSession,
  turn: TurnContext,
  plan: StepPlan,
  { projection, digest }: { readonly projection: ContextProjection; readonly digest: string },
): Promise<ModelRequest> => {
  const { agent } = s;
  const specs: ToolSpec[] = plan.tools.map(toolSpec);
  const request: ModelRequest = {
    model: agent.options.model,
    ...(plan.systemPrompt !== undefined ? { systemPrompt: plan.systemPrompt } : {}),
    items: projection.items,
    ...(specs.length > 0 ? { tools: specs } : {}),
  };
  await runHook(s, 'beforeModelRequest', { ...turn, request, report: projection.report });
  const adapter = agent.options.modelClient.describeRequest?.(request);
  // The prompt and tool specs only when they changed since the last request that carried them.
  const tools = specs.map((spec) => ({ ...spec }));
  const key = promptKey(plan.systemPrompt, tools);
  const previous = s.lastPrompt?.key === key ? s.lastPrompt : undefined;
  const [requested] = await recordEvents(s, [
    {
      type: 'model.requested',
      step: turn.step,
      runId: turn.runId,
      model: agent.options.model,
      ...(previous ? { promptSeq: previous.seq } : { ...(plan.systemPrompt !== undefined ? { systemPrompt: plan.systemPrompt } : {}), tools }),
      itemCount: projection.items.length,
      digest,
      ...(adapter !== undefined ? { adapter } : {}),
    },
  ]);
  if (!previous && requested) s.lastPrompt = { seq: requested.seq, key };
  return request;
};

/** Respond: the model call (not waited for past an abort), its answer normalised and recorded as `model.responded`, then `afterModelResponse`. */
const receiveAnswer = async (s: StepSession, turn: TurnContext, request: ModelRequest, signal: AbortSignal, run: StepRunOptions = {}): Promise<StepAnswer> => {
  const { agent } = s;
  const started = performance.now();
  // A client that ignores the signal is not waited for; its late answer is never recorded.
  const answer = await untilAborted(
    Promise.resolve().then(() => answerOfModel(agent, turn, request, signal, run.onDelta)),
    signal,
    'the model call',
  );
  const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
  const result = normalizeModelAnswer(answer, agent.ids);
  let items = [...result.items];
  const hasAssistantMessage = items.some((i) => isMessage(i) && i.role === 'assistant');
  if (result.outputText !== undefined && result.outputText !== '' && !hasAssistantMessage) {
    items = [...items, assistantMessage(result.outputText)];
  }
  await recordEvents(s, [
    {
      type: 'model.responded',
      step: turn.step,
      runId: turn.runId,
      items,
      ...(result.outputText !== undefined ? { outputText: result.outputText } : {}),
      ...(result.usage !== undefined ? { usage: { ...result.usage } } : {}),
      ...(result.finishReason !== undefined ? { finishReason: result.finishReason } : {}),
      durationMs,
    },
  ]);
  await runHook(s, 'afterModelResponse', { ...turn, result, items });
  return { result, items };
};

/**
 * Project, request and respond; when the provider refuses the request as too long: `model.failed`, a compaction with
 * reason `overflow` (whatever `shouldCompact` says), a projection within a tighter budget, and a retry, up to
 * `overflowRetries` times; then the overflow error ends the run (`run.failed` with reason `context-overflow`).
 */
const answerWithinContext = async (
  s: StepSession,
  turn: TurnContext,
  plan: StepPlan,
  projector: ProjectorOfStep,
  signal: AbortSignal,
  run: StepRunOptions = {},
): Promise<StepAnswer> => {
  const retries = s.agent.options.overflowRetries ?? DEFAULT_OVERFLOW_RETRIES;
  let budget = s.agent.budget;
  for (let attempt = 0; ; attempt++) {
    const projected = await projectStage(s, turn, projector, signal, plan, budget);
    const request = await requestModel(s, turn, plan, projected);
    try {
      return await receiveAnswer(s, turn, request, signal, run);
    } catch (error) {
      if (!ContextOverflowError.isInstance(error) || signal.aborted) throw error;
      await recordOverflow(s, turn, error);
      if (attempt >= retries) throw error;
      await recoverFromOverflow(s, turn, projector, signal, error);
      budget = tighterBudgetAfterOverflow(budget, { requestTokens: tokenCount(error.requestTokens), limitTokens: tokenCount(error.limitTokens) }, projected.projection);
    }
  }
};

/** A token count a client's own ContextOverflowError may carry: recorded only when it is a count. */
const tokenCount = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined);

/** `model.failed` for a context overflow. */
const recordOverflow = async (s: StepSession, turn: TurnContext, error: ContextOverflowError): Promise<void> => {
  const requestTokens = tokenCount(error.requestTokens);
  const limitTokens = tokenCount(error.limitTokens);
  await recordEvents(s, [
    {
      type: 'model.failed',
      step: turn.step,
      runId: turn.runId,
      reason: 'context-overflow',
      error: errorText(error),
      ...(requestTokens !== undefined ? { requestTokens } : {}),
      ...(limitTokens !== undefined ? { limitTokens } : {}),
    },
  ]);
};

/** The agent's policy compacts with reason `overflow` (not gated by `shouldCompact`); then no call is left unanswered. */
const recoverFromOverflow = async (s: StepSession, turn: TurnContext, projector: ProjectorOfStep, signal: AbortSignal, error: ContextOverflowError): Promise<void> => {
  const policy = s.agent.options.compactPolicy;
  if (policy) {
    await s.session.autoCompactIfNecessary(policy, {
      step: turn.step,
      signal,
      tokenizer: (projector.tokenizer !== undefined ? tokenizerFromName(projector.tokenizer) : undefined) ?? approxTokenizer,
      reason: {
        kind: 'overflow',
        ...(tokenCount(error.requestTokens) !== undefined ? { value: tokenCount(error.requestTokens) } : {}),
        ...(tokenCount(error.limitTokens) !== undefined ? { threshold: tokenCount(error.limitTokens) } : {}),
      },
    });
  }
  signal.throwIfAborted();
  await answerUnansweredCalls(s, turn.step, 'the run was interrupted before this call ran');
};

/** End: `step.ended` (unless the run was aborted), then `afterTurn`; the step's output text is the answer's. */
const endStep = async (s: StepSession, turn: TurnContext, { result, items }: StepAnswer, toolCalls: number, signal: AbortSignal): Promise<StepOutcome> => {
  if (signal.aborted) throw signal.reason ?? new AgentRunError('aborted', 'run aborted', turn.runId, turn.sessionId);
  // Stored with the session's next append (the next step's request, or the run's end).
  await deferEvents(s, [{ type: 'step.ended', runId: turn.runId, step: turn.step, toolCalls }]);
  const outputText = result.outputText ?? textOf(lastAssistantMessage(items));
  await runHook(s, 'afterTurn', { ...turn, toolCalls, final: toolCalls === 0 });
  return { toolCalls, outputText, items };
};

/**
 * One step: start, compact, project, request, respond, run tools, end; each stage's events are recorded in that order.
 * @example const outcome = await executeStep(steps, runId, step, stepPlanFor('main', agent), signal)
 */
export const executeStep = async (s: StepSession, runId: string, step: number, plan: StepPlan, signal: AbortSignal, run: StepRunOptions = {}): Promise<StepOutcome> => {
  const turn: TurnContext = { sessionId: s.session.id, runId, step };
  await startStep(s, turn);
  const projector = projectorOfStep(s);
  await compactMemory(s, turn, projector, signal);
  const answer = await answerWithinContext(s, turn, plan, projector, signal, run);
  const { toolCalls, pending } = await runToolCalls(s, turn, plan.tools, answer, signal, s.agent.toolCallLimit);
  const outcome = await endStep(s, turn, answer, toolCalls, signal);
  return pending.length > 0 ? { ...outcome, pending } : outcome;
};
