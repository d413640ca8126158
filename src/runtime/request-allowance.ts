// What the runtime takes off maxTokens at a step (the request's overhead, a calibration margin), and the drift between its counts and the provider's usage.
import { approxTokenizer, requestOverheadTokens, tokenizerFromName, type RequestAllowance, type Tokenizer } from '../context/index.js';
import { InvalidOptionsError } from '../base/errors.js';
import { CALIBRATION_WINDOW, type RunUsage } from '../session/index.js';
import type { ModelClient, ToolSpec } from '../model/index.js';
import type { TurnContext } from './hooks.js';
import { REPLAYED_REQUEST, type StepSession } from './step-session.js';
import { toolSpec, type Tool } from './tools.js';

/** The recorded `context.projected.request`. */
export interface RecordedRequest {
  readonly overheadTokens: number;
  /** v4: the working-memory item was sent whatever the limits, its tokens (text and framing) counted as overhead. */
  readonly workingMemoryTokens?: number | undefined;
  readonly marginTokens?: number | undefined;
  readonly calibration?: { readonly steps: number[]; readonly drifts: number[] } | undefined;
}

/**
 * A re-run's model client answers, per projection in order, what the recording took off maxTokens (`request`), or
 * nothing for a projection recorded before the whole-request budget (the items alone are budgeted then).
 */
export { REPLAYED_REQUEST };
export type ReplayedRequestSource = () => { readonly request?: RecordedRequest };

export { CALIBRATION_WINDOW };

const checkedCount = (value: unknown, client: string): number => {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  throw new InvalidOptionsError('ModelClient.requestOverheadTokens', [
    { path: '', message: `${client} returned ${JSON.stringify(value)}: the overhead must be a non-negative integer number of tokens` },
  ]);
};

/** The tokenizer the projector counts with: its own, else the one its description names, else approx. */
export const tokenizerOfProjector = (own: Tokenizer | undefined, described: string | undefined): Tokenizer =>
  own ?? (described !== undefined ? tokenizerFromName(described) : undefined) ?? approxTokenizer;

/**
 * The margin `calibrate` keeps: the largest positive drift among the session's latest {@link CALIBRATION_WINDOW} steps
 * (across runs), with them, from the session's fold (`RunState.usage`), so a resumed session and a re-run learn the same.
 */
export const calibrationOf = (usage: RunUsage | undefined): { readonly marginTokens: number; readonly steps: number[]; readonly drifts: number[] } | undefined => {
  if (!usage || usage.drifts.length === 0) return undefined;
  const steps = usage.steps.slice(-CALIBRATION_WINDOW);
  const drifts = usage.drifts.slice(-CALIBRATION_WINDOW);
  return { marginTokens: Math.max(0, ...drifts), steps, drifts };
};

/**
 * What this step takes off maxTokens, and what `context.projected.request` records of it (the step adds
 * `workingMemoryTokens` when it projects); undefined for a re-run of a step recorded before the whole-request budget.
 * `replayed`: a re-run's recorded request (`recorded.workingMemoryTokens` then says how the recording sent working memory).
 */
export const requestAllowanceOf = (
  s: StepSession,
  turn: TurnContext,
  plan: { readonly systemPrompt: string | undefined; readonly tools: readonly Tool[] },
  tokenizer: Tokenizer,
): { readonly allowance: RequestAllowance; readonly recorded: RecordedRequest; readonly replayed: boolean } | undefined => {
  const client = s.agent.options.modelClient as ModelClient & { [REPLAYED_REQUEST]?: ReplayedRequestSource };
  const replayed = client[REPLAYED_REQUEST];
  if (replayed) {
    const { request } = replayed();
    if (!request) return undefined;
    return { allowance: { overheadTokens: request.overheadTokens, ...(request.marginTokens !== undefined ? { marginTokens: request.marginTokens } : {}) }, recorded: request, replayed: true };
  }
  const specs: ToolSpec[] = plan.tools.map(toolSpec);
  const prompt = { ...(plan.systemPrompt !== undefined ? { systemPrompt: plan.systemPrompt } : {}), ...(specs.length > 0 ? { tools: specs } : {}) };
  const own = client.requestOverheadTokens?.(prompt, tokenizer);
  const overheadTokens = own !== undefined ? checkedCount(own, 'the model client') : requestOverheadTokens({ systemPrompt: prompt.systemPrompt, tools: specs as unknown as Record<string, unknown>[] }, tokenizer);
  const calibration = s.agent.budget.calibrate === true ? calibrationOf(s.session.state().run.usage) : undefined;
  const recorded: RecordedRequest = {
    overheadTokens,
    ...(calibration ? { marginTokens: calibration.marginTokens, calibration: { steps: calibration.steps, drifts: calibration.drifts } } : {}),
  };
  return { allowance: { overheadTokens, ...(calibration ? { marginTokens: calibration.marginTokens } : {}) }, recorded, replayed: false };
};
