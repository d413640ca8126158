// Re-running a recorded session through the runtime: the model, tools, summarizer, hooks and aborts answer from the recording.
import { z } from 'zod';
import { contextProjectorFromDescription, type ContextBudget } from '../context/index.js';
import { compactPolicyFromDescription, type CompactPolicy } from '../compact/index.js';
import { isFactEvent, type NewSessionEvent, type SessionEvent, type SessionEventOf } from '../events/index.js';
import { canonicalJson } from '../base/index.js';
import type { MemoryItem } from '../items/index.js';
import { createMemoryFold, initialMemoryState, workingMemoryIndex } from '../memory/index.js';
import { LogWriteError, createMemoryLog, type SessionEventLog } from '../log/index.js';
import { ContextOverflowError, type ModelClient, type ModelResult } from '../model/index.js';
import { Agents, EXECUTE_JAVASCRIPT, HOOK_NAMES, REPLAYED_REQUEST, createReplayCodeSandboxPool, defineTool, type Agent, type AgentHooks, type AgentOptions, type AgentRunSession, type CodeSandboxPool, type ReplayedRequestSource, type RunResult, type RuntimeKind, type RuntimeNotification, type Tool } from '../runtime/index.js';
import { erasedStepsOf } from './erased-steps.js';
import { RecordedError, ReplayDivergenceError } from './errors.js';
import { DEFAULT_REPLAY_MAX_CODE_TIMEOUT_MS, type Divergence, type ReplayOptions, type ReplayResult } from './types.js';

/**
 * The fields a re-run may change (`contentDigest` covers `durationMs` and the random `contentSalt`; `erased` is the mark
 * `log.erase` puts on a recorded event, which a re-run never writes; checkpoint.taken, storage bookkeeping, and
 * event.erased, the log's record of an erasure, are compared apart).
 */
export const FIELDS_A_RERUN_MAY_CHANGE = ['at', 'hash', 'prevHash', 'durationMs', 'contentDigest', 'contentSalt', 'erased'] as const;
const IGNORED = new Set<string>(FIELDS_A_RERUN_MAY_CHANGE);

const ofType = <T extends SessionEvent['type']>(events: readonly SessionEvent[], type: T): SessionEventOf<T>[] =>
  events.filter((e): e is SessionEventOf<T> => e.type === type);

/** Events the memory tools record during a call; a re-run's tool records them again as they were. */
const MEMORY_TOOL_EVENTS = new Set<string>(['memory.noted', 'memory.recalled', 'compaction.requested']);

/** The envelope-free payload of a recorded event, to append it again. */
const payloadOf = (event: SessionEvent): NewSessionEvent => {
  const { sessionId: _s, seq: _q, at: _a, v: _v, prevHash: _p, hash: _h, ...payload } = event;
  return payload as NewSessionEvent;
};

type ModelAnswer =
  | { readonly kind: 'answer'; readonly result: ModelResult }
  | { readonly kind: 'error'; readonly message: string }
  | { readonly kind: 'abort'; readonly reason: string }
  | { readonly kind: 'overflow'; readonly failed: SessionEventOf<'model.failed'> };

/** The recorded overflow raised again, with its message and token counts, so the runtime recovers as it did. */
const overflowAgain = (failed: { readonly error: string; readonly requestTokens?: number | undefined; readonly limitTokens?: number | undefined }): ContextOverflowError =>
  new ContextOverflowError(failed.error, { requestTokens: failed.requestTokens, limitTokens: failed.limitTokens });

/** The `overflowRetries` a recording used: the failures of the step that gave up, less one; else at least the most any step recovered from. */
const recordedOverflowRetries = (events: readonly SessionEvent[]): number | undefined => {
  const perStep = new Map<string, number>();
  let gaveUp: number | undefined;
  for (const event of events) {
    if (event.type === 'model.failed' && event.reason === 'context-overflow') {
      const key = `${event.runId ?? ''}@${event.step ?? ''}`;
      perStep.set(key, (perStep.get(key) ?? 0) + 1);
    } else if (event.type === 'run.failed' && event.reason === 'context-overflow' && gaveUp === undefined) {
      gaveUp = (perStep.get(`${event.runId}@${event.step ?? ''}`) ?? 1) - 1;
    }
  }
  if (gaveUp !== undefined) return gaveUp;
  const most = Math.max(0, ...perStep.values());
  return most > 2 ? most : undefined;
};

const abortReasonOf = (failed: SessionEventOf<'run.failed'>): string => failed.message.replace(/^run aborted: /, '');

/** Rebuilds the compaction policy a recording used (for rerun); undefined when it never compacted automatically. */
const recordedPolicy = (events: readonly SessionEvent[], options: ReplayOptions): CompactPolicy | undefined => {
  if (options.policy) return options.policy;
  const described = events.find(
    (e): e is SessionEventOf<'memory.compacted'> | SessionEventOf<'compaction.failed'> | SessionEventOf<'compaction.skipped'> =>
      (e.type === 'memory.compacted' || e.type === 'compaction.failed' || e.type === 'compaction.skipped') && e.trigger === 'auto' && e.policy.name !== 'none',
  );
  if (!described) return undefined;
  return compactPolicyFromDescription(described.policy, { summarizer: options.summarizer, registry: options.registry });
};


/** What the model answered at each request, in order: its recorded response, or how the call ended. */
const modelAnswers = (events: readonly SessionEvent[]): ModelAnswer[] => {
  const answers: ModelAnswer[] = [];
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    if (event.type !== 'model.requested') continue;
    let answer: ModelAnswer | undefined;
    for (let j = i + 1; j < events.length && !answer; j++) {
      const next = events[j]!;
      if (next.type === 'model.responded') {
        answer = {
          kind: 'answer',
          result: {
            items: next.items,
            ...(next.outputText !== undefined ? { outputText: next.outputText } : {}),
            ...(next.usage !== undefined ? { usage: next.usage } : {}),
            ...(next.finishReason !== undefined ? { finishReason: next.finishReason } : {}),
          },
        };
      } else if (next.type === 'model.failed') {
        answer = { kind: 'overflow', failed: next };
      } else if (next.type === 'run.failed') {
        answer = next.reason === 'aborted' ? { kind: 'abort', reason: abortReasonOf(next) } : { kind: 'error', message: next.message };
      } else if (next.type === 'model.requested' || next.type === 'step.started') {
        break;
      }
    }
    answers.push(answer ?? { kind: 'error', message: 'the recording has no answer for this request' });
  }
  return answers;
};

/** Where a recorded tool stage was aborted, by run, step and call (`stageKey`). */
interface ToolStageAborts {
  /** The last call the stage started before the abort → the abort's reason. */
  readonly atCallStart: ReadonlyMap<string, string>;
  /** A stage that started no call (the abort came once the answer was in) → the abort's reason. */
  readonly afterAnswer: ReadonlyMap<string, string>;
}

const stageKey = (runId: string | undefined, step: number | undefined, callId?: string): string => `${runId ?? ''}@${step ?? ''}${callId !== undefined ? `@${callId}` : ''}`;

/** Events that end a walk back from a `run.failed` through the tool stage it ended. */
const STAGE_BOUNDARIES = new Set<string>(['model.responded', 'approval.call-started', 'step.ended', 'step.started', 'model.requested', 'model.failed', 'run.started', 'context.projected', 'user.input', 'run.finished', 'run.failed']);

/**
 * The aborts recorded while a step ran its tools (`run.failed` aborted after the step's results, before its
 * `step.ended`). The calls of a stage start in call order, so the calls it started are the ones with a result other
 * than the run's `not executed` (recorded in call order): a re-run aborts as the last of them starts, and starts the
 * same calls however many ran at once and in whatever order they ended. Linear in the recording.
 */
const abortsInToolStages = (events: readonly SessionEvent[]): ToolStageAborts => {
  const atCallStart = new Map<string, string>();
  const afterAnswer = new Map<string, string>();
  for (let i = 0; i < events.length; i++) {
    const failed = events[i]!;
    if (failed.type !== 'run.failed' || failed.reason !== 'aborted') continue;
    let lastStarted: SessionEventOf<'tool.result'> | undefined;
    let asked = false;
    let j = i - 1;
    for (; j >= 0 && !STAGE_BOUNDARIES.has(events[j]!.type); j--) {
      const e = events[j]!;
      if (e.type === 'approval.requested') asked = true;
      if (lastStarted === undefined && e.type === 'tool.result' && e.parentCallId === undefined && !(e.isError && e.output.startsWith('Error: not executed: '))) lastStarted = e;
    }
    const boundary = events[j];
    if (boundary?.type !== 'model.responded' && boundary?.type !== 'approval.call-started') continue;
    const reason = abortReasonOf(failed);
    if (lastStarted !== undefined) atCallStart.set(stageKey(failed.runId, lastStarted.step ?? failed.step, lastStarted.callId), reason);
    else if (boundary.type === 'model.responded' && !asked) afterAnswer.set(stageKey(failed.runId, boundary.step ?? failed.step), reason);
  }
  return { atCallStart, afterAnswer };
};

/**
 * Where the recording's process ended inside run `runId` (killed, crashed, the machine lost power) and a later process
 * continued the run: the seq of the last event stored before the continuing process's first `step.started`, for each
 * step that has no `step.ended` when the run's next step starts. A step's bookkeeping events wait for the session's
 * next append (decision 0033), so a process killed between a step's last result and the next model call leaves its
 * `step.ended` (and the next `step.started`) unstored.
 */
export const crashPointsOf = (events: readonly SessionEvent[], runId: string): number[] => {
  const points: number[] = [];
  let open = false;
  let previous: number | undefined;
  for (const event of events) {
    const ofRun = (event as { runId?: string }).runId === runId;
    if (event.type === 'step.started' && ofRun) {
      if (open && previous !== undefined) points.push(previous);
      open = true;
    } else if (event.type === 'step.ended' && ofRun) {
      open = false;
    }
    previous = event.seq;
  }
  return points;
};

/** The summarizer's recorded answers (and failures), in the order the compactions happened. */
const summarizerAnswers = (events: readonly SessionEvent[]): ModelClient => {
  const queue: ({ rawAnswer: string; usage?: Record<string, unknown> } | { error: string } | { overflow: { error: string; requestTokens?: number; limitTokens?: number } })[] = [];
  for (const event of events) {
    const calls = event.type === 'memory.compacted' ? (event.summarizer?.request as { calls?: unknown } | undefined)?.calls : undefined;
    if (event.type === 'memory.compacted' && Array.isArray(calls)) {
      // Several summarizer calls (chunks, overflow retries): each answers, or overflows, as recorded.
      for (const call of calls as { rawAnswer?: unknown; usage?: Record<string, unknown>; error?: unknown; requestTokens?: number; limitTokens?: number }[]) {
        if (typeof call.rawAnswer === 'string') queue.push({ rawAnswer: call.rawAnswer, ...(call.usage ? { usage: call.usage } : {}) });
        else queue.push({ overflow: { error: String(call.error), ...(call.requestTokens !== undefined ? { requestTokens: call.requestTokens } : {}), ...(call.limitTokens !== undefined ? { limitTokens: call.limitTokens } : {}) } });
      }
    } else if (event.type === 'memory.compacted' && event.summarizer) queue.push({ rawAnswer: event.summarizer.rawAnswer, ...(event.usage ? { usage: event.usage } : {}) });
    else if (event.type === 'compaction.failed' && event.stage === 'compact' && (event.policy.name === 'LlmCompactPolicy' || event.policy.name === 'ProviderCompactPolicy')) queue.push({ error: event.error });
  }
  let next = 0;
  return {
    async create() {
      const answer = queue[next++];
      if (!answer) throw new ReplayDivergenceError('replay: the recording has no further summarizer answer');
      if ('error' in answer) throw new RecordedError(answer.error);
      if ('overflow' in answer) throw overflowAgain(answer.overflow);
      return { outputText: answer.rawAnswer, items: [], ...(answer.usage ? { usage: answer.usage } : {}) };
    },
  };
};

interface Recorded {
  readonly kind: RuntimeKind;
  readonly options: Omit<AgentOptions, 'modelClient' | 'log' | 'ids' | 'hooks'>;
  readonly notes: string[];
  /** Set when the recorded code limit was above the replay's cap. */
  readonly capped?: { readonly recordedMs: number; readonly capMs: number };
}

/** Rebuilds the agent's settings from the recording (run.started v2 settings; older recordings from their requests). */
const recordedSettings = (events: readonly SessionEvent[], replay: ReplayOptions): Recorded => {
  const notes: string[] = [];
  const runs = ofType(events, 'run.started');
  const kindName = runs[0]?.runtime ?? 'react';
  const kind: RuntimeKind = kindName === 'deepResearch' || kindName === 'codeAct' ? kindName : 'react';
  const settings = runs.find((r) => r.settings)?.settings;
  const requests = ofType(events, 'model.requested');
  const projected = ofType(events, 'context.projected');
  let systemPrompt = settings ? settings.systemPrompt : requests[0]?.systemPrompt;
  if (!settings && kind !== 'react' && systemPrompt !== undefined) {
    systemPrompt = systemPrompt.includes('\n\n') ? systemPrompt.slice(0, systemPrompt.lastIndexOf('\n\n')) : undefined;
  }
  if (!settings) notes.push('the recording predates run.started settings: model, system prompt and limits were taken from its requests');
  const maxStepsFailure = ofType(events, 'run.failed').find((f) => f.reason === 'max-steps');
  const maxSteps = settings?.maxSteps ?? (maxStepsFailure ? Number(/maxSteps \((\d+)\)/.exec(maxStepsFailure.message)?.[1] ?? 50) : 50);
  const checkpointEvery = settings?.checkpointEvery ?? ofType(events, 'checkpoint.taken')[0]?.checkpointEvery;
  const overflowRetries = recordedOverflowRetries(events);
  // Tools from the JSON Schema the model was sent (every name seen, first spec wins).
  const specs = new Map<string, Record<string, unknown>>();
  for (const request of requests) for (const spec of request.tools ?? []) if (typeof spec['name'] === 'string' && !specs.has(spec['name'])) specs.set(spec['name'], spec);
  const policy = recordedPolicy(events, { ...replay, summarizer: replay.summarizer ?? summarizerAnswers(events) });
  const projector = replay.projector ?? (projected[0] ? contextProjectorFromDescription(projected[0].projector, replay.registry ?? {}) : undefined);
  const budget = replay.budget ?? userBudgetOf(events, projected);
  const tools = kind === 'codeAct' ? [] : [...specs.values()];
  const capMs = replay.maxCodeTimeoutMs ?? DEFAULT_REPLAY_MAX_CODE_TIMEOUT_MS;
  const recordedCodeMs = settings?.codeTimeoutMs;
  const capped = recordedCodeMs !== undefined && recordedCodeMs > capMs ? { recordedMs: recordedCodeMs, capMs } : undefined;
  if (capped) notes.push(`the recorded code limit of ${capped.recordedMs} ms was capped at ${capped.capMs} ms (maxCodeTimeoutMs)`);
  return {
    kind,
    notes,
    ...(capped ? { capped } : {}),
    options: {
      model: settings?.model ?? requests[0]?.model ?? 'unknown',
      ...(systemPrompt !== undefined ? { systemPrompt } : {}),
      maxSteps,
      ...(checkpointEvery !== undefined ? { checkpointEvery } : {}),
      ...(overflowRetries !== undefined ? { overflowRetries } : {}),
      ...(recordedCodeMs !== undefined ? { codeTimeoutMs: Math.min(recordedCodeMs, capMs) } : {}),
      ...(projector ? { contextProjector: projector } : {}),
      ...(budget ? { contextBudget: budget } : {}),
      ...(policy ? { compactPolicy: policy } : {}),
      tools: tools.map((spec) => replayTool(spec)),
    },
  };
};

/**
 * The budget the agent was given, from the recorded ones: a step whose memory held working-memory blocks recorded
 * it with `pinnedPrefixItems` raised to cover them, so the first step where that did not apply gives it as it was;
 * when every step raised it, any lower value projects the same, and the budget without it is used.
 */
const userBudgetOf = (events: readonly SessionEvent[], projected: readonly SessionEventOf<'context.projected'>[]): ContextBudget | undefined => {
  const first = projected[0]?.budget as ContextBudget | undefined;
  if (!first || !events.some((e) => e.type === 'memory.noted')) return first;
  const fold = createMemoryFold(initialMemoryState);
  for (const event of events) {
    if (event.type === 'context.projected') {
      const index = workingMemoryIndex(fold.result());
      const pinned = (event.budget as ContextBudget).pinnedPrefixItems ?? 0;
      if (index < 0 || pinned > index + 1) return event.budget as ContextBudget;
    }
    fold.add(event);
  }
  const { pinnedPrefixItems: _pinned, ...rest } = first;
  return rest;
};

/** A tool that sends the recorded spec; its answers are set by the re-run (see `answerTools`). */
const replayTool = (spec: Record<string, unknown>): Tool =>
  defineTool({
    name: String(spec['name']),
    description: typeof spec['description'] === 'string' ? spec['description'] : '',
    parameters: z.unknown(),
    inputSchema: (spec['parameters'] as Record<string, unknown> | undefined) ?? {},
    execute: () => {
      throw new ReplayDivergenceError('replay tool called outside a re-run');
    },
  });

/** Field names whose values differ between two events (envelope fields a re-run may change left out). */
const differingFields = (recorded: SessionEvent, again: SessionEvent, overridden: ReadonlySet<string>): string[] => {
  const keys = new Set([...Object.keys(recorded), ...Object.keys(again)]);
  const fields: string[] = [];
  for (const key of keys) {
    if (IGNORED.has(key) || overridden.has(`${recorded.type}.${key}`)) continue;
    const a = (recorded as unknown as Record<string, unknown>)[key];
    const b = (again as unknown as Record<string, unknown>)[key];
    if (canonicalJson(a ?? null) !== canonicalJson(b ?? null)) fields.push(key);
  }
  return fields;
};

/** Steps whose code the re-run stopped at the replay's cap. */
const cappedSteps = (events: readonly SessionEvent[], capped: Recorded['capped']): number[] => {
  if (!capped) return [];
  const marker = `code timed out after ${capped.capMs} ms`;
  const steps = ofType(events, 'tool.result').filter((r) => r.isError && r.output.includes(marker)).map((r) => r.step ?? 0);
  return [...new Set(steps)];
};

/** The code limit a capped re-run ran under, put back to the recorded one: the cap is the replay's own setting. */
const uncapSettings = (event: SessionEvent, capped: Recorded['capped']): SessionEvent => {
  if (!capped) return event;
  if (event.type === 'run.started' && event.settings?.codeTimeoutMs === capped.capMs) {
    return { ...event, settings: { ...event.settings, codeTimeoutMs: capped.recordedMs } } as SessionEvent;
  }
  if (event.type === 'model.requested' && event.tools) {
    const from = `Time limit ${capped.capMs} ms`;
    const to = `Time limit ${capped.recordedMs} ms`;
    const tools = event.tools.map((t) =>
      t['name'] === EXECUTE_JAVASCRIPT && typeof t['description'] === 'string' ? { ...t, description: t['description'].replace(from, to) } : t,
    );
    return { ...event, tools } as SessionEvent;
  }
  return event;
};

/** The recorded events, the caller's signal checked at each. */
const readRecording = async (log: SessionEventLog, sessionId: string, options: ReplayOptions): Promise<SessionEvent[]> => {
  const recordedEvents: SessionEvent[] = [];
  for await (const event of log.read(sessionId)) {
    options.signal?.throwIfAborted();
    recordedEvents.push(event);
  }
  return recordedEvents;
};

/** What the model client, the hooks, the event listener and the log share with the stage that drives the runs. */
interface RerunControl {
  /** The run being re-run: a recorded abort aborts it; each run() gets a new one (`newController`). */
  controller: AbortController;
  /**
   * Where the recorded process ended mid-run (crashPointsOf): the re-run's log refuses every append past that seq, as
   * a dead process stores nothing more, and the re-run then resumes the session as the continuing process did.
   */
  readonly dying: { at: number | undefined; reached: boolean };
}

/** The model answers in order; an abort is raised the way the original run saw it. */
const replayModelClient = (recordedEvents: readonly SessionEvent[], control: RerunControl, options: ReplayOptions): ModelClient & { [REPLAYED_REQUEST]: ReplayedRequestSource } => {
  const answers = modelAnswers(recordedEvents);
  let answerIndex = 0;
  // What each recorded projection took off maxTokens (the whole request), or nothing before v3: answered in order.
  const requests = ofType(recordedEvents, 'context.projected').map((p) => p.request);
  let requestIndex = 0;
  const replayedRequest: ReplayedRequestSource = () => {
    const request = requests[requestIndex++];
    return request ? { request } : {};
  };
  // What the recorded client added to each request (`model.requested.adapter`, Anthropic's first-turn placeholder), in order.
  const adapters = ofType(recordedEvents, 'model.requested').map((r) => r.adapter);
  let adapterIndex = 0;
  return {
    [REPLAYED_REQUEST]: replayedRequest,
    describeRequest: () => adapters[adapterIndex++],
    async create() {
      const answer = answers[answerIndex++];
      options.onProgress?.(answerIndex, answers.length);
      if (!answer) throw new ReplayDivergenceError('replay: the recording has no further model answer');
      if (answer.kind === 'answer') return answer.result;
      if (answer.kind === 'abort') {
        const reason = new RecordedError(answer.reason);
        control.controller.abort(reason);
        throw reason;
      }
      if (answer.kind === 'overflow') throw overflowAgain(answer.failed);
      throw new RecordedError(answer.message);
    },
  };
};

/**
 * Tool results by call id (outer calls), with the facts and nested results recorded while each ran.
 * One pass each way (linear in the recording, however many results a step has).
 */
const recordedResults = (recordedEvents: readonly SessionEvent[]): Map<string, { output: string; isError: boolean; during: SessionEvent[] }> => {
  const results = new Map<string, { output: string; isError: boolean; during: SessionEvent[] }>();
  let duringStart = 0;
  for (let i = 0; i < recordedEvents.length; i++) {
    const event = recordedEvents[i]!;
    const isOuterResult = event.type === 'tool.result' && event.parentCallId === undefined;
    if (!isOuterResult) {
      if (event.type === 'model.responded') duringStart = i + 1;
      continue;
    }
    const during = recordedEvents.slice(duringStart, i);
    duringStart = i + 1;
    if (!results.has(event.callId)) results.set(event.callId, { output: event.output, isError: event.isError, during });
  }
  return results;
};

/** The recorded tools, answering as recorded; the calls that asked for approval ask again (their decisions are replayed from the recording). */
const replayTools = (recordedEvents: readonly SessionEvent[], recordedTools: readonly Tool[] | undefined): Tool[] => {
  const results = recordedResults(recordedEvents);
  const requested = new Set(ofType(recordedEvents, 'approval.requested').map((r) => r.callId));
  return (recordedTools ?? []).map((tool) => ({
    ...tool,
    needsApproval: (_args: unknown, context: { readonly callId: string }) => requested.has(context.callId),
    execute: async (_args: unknown, context) => {
      const recorded = results.get(context.callId);
      if (!recorded) throw new ReplayDivergenceError(`replay: no recorded result for call ${context.callId}`);
      for (const fact of recorded.during) {
        // Facts, and what the memory tools record while they run (an edit, a recall, a requested compaction); a decision
        // on a pending call is the host's (replayed by approve / reject below), not the tool's.
        if ((isFactEvent(fact) && !(fact.type === 'approval.recorded' && fact.callId !== undefined)) || MEMORY_TOOL_EVENTS.has(fact.type)) {
          await context.record(payloadOf(fact) as Parameters<typeof context.record>[0]);
        }
      }
      if (recorded.isError) throw new RecordedError(recorded.output.replace(/^Error: /, ''));
      return recorded.output;
    },
  }));
};

/** A recorded hook failure's key: the hook and step, and for a tool-call hook its call. */
const hookKey = (hook: string, step: number | undefined, callId: string | undefined): string =>
  `${hook}@${step ?? ''}${hook === 'beforeToolCall' || hook === 'afterToolCall' ? `@${callId ?? ''}` : ''}`;

/**
 * The recorded hook failures by `hookKey`, in order. A tool-call hook's failure belongs to its call: beforeToolCall's to
 * the next outer result, afterToolCall's to the one before.
 */
const recordedHookFailures = (recordedEvents: readonly SessionEvent[]): Map<string, string[]> => {
  const hookFailures = new Map<string, string[]>();
  recordedEvents.forEach((failed, index) => {
    if (failed.type !== 'hook.failed') return;
    const isOuterResult = (e: SessionEvent | undefined): e is SessionEventOf<'tool.result'> => e?.type === 'tool.result' && e.parentCallId === undefined;
    let callId: string | undefined;
    if (failed.hook === 'beforeToolCall') callId = recordedEvents.slice(index + 1).find(isOuterResult)?.callId;
    if (failed.hook === 'afterToolCall') callId = recordedEvents.slice(0, index).reverse().find(isOuterResult)?.callId;
    const key = hookKey(failed.hook, failed.step, callId);
    hookFailures.set(key, [...(hookFailures.get(key) ?? []), failed.error]);
  });
  return hookFailures;
};

/** The aborts recorded after a finished step (`run.failed` aborted, with the step's `step.ended`): step → the abort's reason. */
const abortsAfterSteps = (recordedEvents: readonly SessionEvent[]): Map<number, string> => {
  const abortAfterStep = new Map<number, string>();
  for (const failed of ofType(recordedEvents, 'run.failed')) {
    if (failed.reason !== 'aborted' || failed.step === undefined) continue;
    const ended = recordedEvents.some((e) => e.type === 'step.ended' && e.step === failed.step && e.runId === failed.runId);
    if (ended) abortAfterStep.set(failed.step, abortReasonOf(failed));
  }
  return abortAfterStep;
};

/**
 * Hooks: recorded hook failures are thrown again at the same hook and step; a recorded veto vetoes again;
 * an abort recorded after a finished step is raised after that step.
 */
const replayHooks = (recordedEvents: readonly SessionEvent[], control: RerunControl): AgentHooks => {
  const toolStageAborts = abortsInToolStages(recordedEvents);
  const hookFailures = recordedHookFailures(recordedEvents);
  const vetoes = new Set(ofType(recordedEvents, 'compaction.skipped').map((s) => s.step));
  const abortAfterStep = abortsAfterSteps(recordedEvents);
  const hooks: AgentHooks = {};
  for (const name of HOOK_NAMES) {
    (hooks as Record<string, unknown>)[name] = (context: { runId?: string; step?: number; call?: { callId?: string } }) => {
      // An abort recorded in a tool stage: raised as the last call the recording started begins (or, when it started
      // none, once the answer is in), so the same calls start, whatever order they ended in.
      const stageAbort =
        name === 'beforeToolCall' ? toolStageAborts.atCallStart.get(stageKey(context.runId, context.step, context.call?.callId)) : name === 'afterModelResponse' ? toolStageAborts.afterAnswer.get(stageKey(context.runId, context.step)) : undefined;
      if (stageAbort !== undefined) control.controller.abort(new RecordedError(stageAbort));
      const key = hookKey(name, context.step, context.call?.callId);
      const queued = hookFailures.get(key);
      if (name === 'afterTurn' && context.step !== undefined && abortAfterStep.has(context.step)) control.controller.abort(new RecordedError(abortAfterStep.get(context.step) ?? 'aborted'));
      if (queued && queued.length > 0) throw new RecordedError(queued.shift() ?? '');
      if (name === 'beforeCompact' && vetoes.has(context.step)) return false;
      return undefined;
    };
  }
  return hooks;
};

/**
 * An abort the recording saw between two of its events (the host's signal, when the runtime next checked it: after
 * opening a run, a step's start, a compaction, the model's answer, the step's last tool result, ...): the count of
 * events (checkpoint.taken left out) stored before it → the abort's reason. Aborts inside a model call, and those the
 * tool results and hooks raise, stay with them: the one before is then a `model.requested`.
 * The calls the abort left unexecuted (recorded in one append) come after that event.
 */
const abortsBetweenEvents = (recordedEvents: readonly SessionEvent[]): Map<number, string> => {
  const abortAtCount = new Map<number, string>();
  const comparableEvents = recordedEvents.filter((e) => e.type !== 'checkpoint.taken');
  const notExecuted = (e: SessionEvent | undefined): boolean =>
    e?.type === 'tool.result' && e.parentCallId === undefined && e.isError && e.output.startsWith('Error: not executed: run aborted');
  comparableEvents.forEach((event, index) => {
    if (event.type !== 'run.failed' || event.reason !== 'aborted') return;
    let before = index - 1;
    while (before >= 0 && notExecuted(comparableEvents[before])) before -= 1;
    const at = comparableEvents[before];
    if (at !== undefined && at.type !== 'model.requested') abortAtCount.set(before + 1, abortReasonOf(event));
  });
  return abortAtCount;
};

/** The agent's event listener: an abort between two recorded events (`abortsBetweenEvents`) is raised again once the re-run has stored the event before it. */
const abortingListener = (recordedEvents: readonly SessionEvent[], control: RerunControl, onEvent: ((notification: RuntimeNotification) => void) | undefined): ((notification: RuntimeNotification) => void) => {
  const abortAtCount = abortsBetweenEvents(recordedEvents);
  let storedCount = 0;
  return (notification) => {
    if (notification.type === 'EVENT' && notification.event.type !== 'checkpoint.taken') {
      storedCount += 1;
      const reason = abortAtCount.get(storedCount);
      if (reason !== undefined && !control.controller.signal.aborted) control.controller.abort(new RecordedError(reason));
    }
    onEvent?.(notification);
  };
};

/** The agent's view of the re-run's log: it refuses every append past where the recorded process died (`RerunControl.dying`). */
const dyingLog = (rerunLog: SessionEventLog, dying: RerunControl['dying']): SessionEventLog =>
  new Proxy(rerunLog, {
    get(target, key) {
      if (key === 'append') {
        return async (...args: Parameters<SessionEventLog['append']>) => {
          const [id] = args;
          if (dying.at !== undefined && (await target.head(id)) >= dying.at) {
            dying.reached = true;
            throw new LogWriteError(id, new RecordedError(`replay: the recorded process ended after seq ${dying.at}`), false);
          }
          return target.append(...args);
        };
      }
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });

/** What the stages that drive the recording share: the agent, the session it drives, and what the replay must close. */
interface Rerun {
  readonly sessionId: string;
  readonly agent: Agent;
  /** The session being driven; a process the recording resumed the session in replaces it. */
  session: AgentRunSession;
  readonly control: RerunControl;
  /** The caller's signal, and its listener that aborts the run being re-run. */
  readonly signal: AbortSignal | undefined;
  readonly onCancel: () => void;
  /** The re-run's own log (read back to compare) and the code pool (closed with the replay). */
  readonly log: SessionEventLog;
  readonly codePool: CodeSandboxPool | undefined;
  readonly notes: string[];
}

/** The agent of the recording, answering from it (model, tools, hooks, aborts), over a fresh in-memory log with a new session. */
const startRerun = async (recordedEvents: readonly SessionEvent[], { kind, options: agentOptions, notes }: Recorded, sessionId: string, options: ReplayOptions): Promise<Rerun> => {
  const control: RerunControl = { controller: new AbortController(), dying: { at: undefined, reached: false } };
  const modelClient = replayModelClient(recordedEvents, control, options);
  const tools = replayTools(recordedEvents, agentOptions.tools);
  const hooks = replayHooks(recordedEvents, control);
  const onEvent = abortingListener(recordedEvents, control, agentOptions.onEvent);
  const ids = [sessionId, ...ofType(recordedEvents, 'run.started').map((r) => r.runId)];
  let extraIds = 0;
  // in the recording's chain version, so the re-run's events have the same envelope fields (contentDigest or not)
  const rerunLog = createMemoryLog({ chainVersion: recordedEvents[0]?.contentDigest === undefined ? 1 : 2 });
  // Code runs again with its deadline from its start, so a busy replaying host cannot make a recorded call one that
  // never started; the pool's workers end with the replay.
  const codePool = kind === 'codeAct' ? createReplayCodeSandboxPool() : undefined;
  const agent = Agents[kind]({
    ...agentOptions,
    ...(codePool ? { codeSandboxPool: codePool } : {}),
    tools,
    modelClient,
    log: dyingLog(rerunLog, control.dying),
    hooks,
    onEvent,
    ids: () => ids.shift() ?? `replay-extra-${++extraIds}`,
  });
  const session = await agent.newSession();
  // The caller's signal ends the run being re-run (and the code or tool it waits for), then the replay.
  const signal = options.signal;
  const onCancel = (): void => control.controller.abort(signal?.reason);
  signal?.addEventListener('abort', onCancel, { once: true });
  return { sessionId, agent, session, control, signal, onCancel, log: rerunLog, codePool, notes };
};

/** The caller's listener removed and the code pool's workers ended, however the drive ended. */
const stopRerun = async (rerun: Rerun): Promise<void> => {
  rerun.signal?.removeEventListener('abort', rerun.onCancel);
  await rerun.codePool?.close();
};

/** A controller for the next run() (aborted when the caller's signal is); throws once the caller aborted. */
const newController = (signal: AbortSignal | undefined): AbortController => {
  signal?.throwIfAborted();
  const next = new AbortController();
  if (signal?.aborted) next.abort(signal.reason);
  return next;
};

const RUN_ENDS = new Set(['run.finished', 'run.failed']);
const RUNTIME_ONLY = new Set<string>(['approval.requested', 'approval.call-started', 'step.started', 'step.ended', 'context.projected', 'model.requested', 'model.responded', 'model.failed', 'plan.created', 'run.finished', 'run.failed']);

/** Drive it: host events outside runs are appended again; each recorded run is run again with its input. */
const driveRecording = async (rerun: Rerun, recordedEvents: readonly SessionEvent[]): Promise<void> => {
  for (let i = 0; i < recordedEvents.length; i++) {
    const event = recordedEvents[i]!;
    // event.erased is the log's own record (log.erase writes it; no session can append it)
    if (event.type === 'session.started' || event.type === 'checkpoint.taken' || event.type === 'event.erased') continue;
    if (event.type === 'run.started') {
      i = await rerunRun(rerun, recordedEvents, i);
      continue;
    }
    if (RUNTIME_ONLY.has(event.type)) {
      // A run event outside a run this re-run drove (e.g. a run a crash left open and a later process
      // continued): appending it verbatim would fake a match, so stop here and let the comparison say so.
      rerun.notes.push(`the recording continues a run outside run.started at seq ${event.seq} (${event.type}); the re-run stops there`);
      break;
    }
    await rerun.session.session.record([payloadOf(event)]);
  }
};

/**
 * The recorded run that `run.started` at index `i` opens, run again: opened as the recording's process opened it, run
 * with its input, continued where the recorded process died and after each recorded decision. Returns its end's index.
 */
const rerunRun = async (rerun: Rerun, recordedEvents: readonly SessionEvent[], i: number): Promise<number> => {
  const event = recordedEvents[i] as SessionEventOf<'run.started'>;
  // A run whose first request carried the prompt in full was run by a process that had just opened the session
  // (a resume records the prompt again): open it again here too, so its requests are recorded the same way.
  const firstRequest = recordedEvents.slice(i + 1).find((e): e is SessionEventOf<'model.requested'> => e.type === 'model.requested' && e.runId === event.runId);
  if (firstRequest && firstRequest.promptSeq === undefined && ofType(recordedEvents.slice(0, i), 'model.requested').length > 0) {
    rerun.session = await rerun.agent.resumeSession(rerun.sessionId);
  }
  const input = recordedEvents[i + 1];
  const items: MemoryItem[] = input?.type === 'user.input' ? [...input.items] : [];
  let j = i + 1;
  while (j < recordedEvents.length && !(RUN_ENDS.has(recordedEvents[j]!.type) && (recordedEvents[j] as { runId?: string }).runId === event.runId)) j++;
  const crashes = crashPointsOf(recordedEvents.slice(i + 1, j + 1), event.runId);
  rerun.control.dying.at = crashes.shift();
  const outcome = await runOnce(rerun, items, crashes);
  await continueAfterDecisions(rerun, recordedEvents.slice(i + 1, j), outcome, crashes);
  rerun.control.dying.at = undefined;
  return j;
};

/** run() (or its continuation); where the recorded process died, a new one resumes the session and continues the run. */
const runOnce = async (rerun: Rerun, runInput: MemoryItem[] | undefined, crashes: number[]): Promise<RunResult | undefined> => {
  const { control } = rerun;
  control.controller = newController(rerun.signal);
  let result = await rerun.session.run(runInput, { signal: control.controller.signal }).catch(() => undefined);
  while (control.dying.reached) {
    control.dying.reached = false;
    control.dying.at = crashes.shift();
    rerun.session = await rerun.agent.resumeSession(rerun.sessionId);
    control.controller = newController(rerun.signal);
    result = await rerun.session.run(undefined, { signal: control.controller.signal }).catch(() => undefined);
  }
  return result;
};

/** An interrupted run: the recorded decisions on its calls (`ofRun`: the run's events), in order, then run() continues it as the host did. */
const continueAfterDecisions = async (rerun: Rerun, ofRun: readonly SessionEvent[], first: RunResult | undefined, crashes: number[]): Promise<void> => {
  const decisions = ofRun.filter((e): e is SessionEventOf<'approval.recorded'> => e.type === 'approval.recorded' && e.callId !== undefined);
  let decidedAt = 0;
  let outcome = first;
  while (outcome?.status === 'interrupted') {
    while (rerun.session.pendingApprovals().length > 0 && decisions.length > 0) {
      const decision = decisions.shift()!;
      decidedAt = decision.seq;
      const by = { ...(decision.by !== undefined ? { by: decision.by } : {}), ...(decision.reason !== undefined ? { reason: decision.reason } : {}) };
      await (decision.approved ? rerun.session.approve(decision.callId!, by) : rerun.session.reject(decision.callId!, by)).catch(() => undefined);
    }
    if (rerun.session.pendingApprovals().length > 0) break;
    // A continuation whose first request carried the prompt in full came from another process (a resumed session
    // records it again): resume here too, so the re-run records it the same way.
    const continued = ofRun.find((e) => e.type === 'model.requested' && e.seq > decidedAt);
    if (continued?.type === 'model.requested' && continued.promptSeq === undefined) rerun.session = await rerun.agent.resumeSession(rerun.sessionId);
    outcome = await runOnce(rerun, undefined, crashes);
  }
};

/** The re-run's events as stored, the code limit put back to the recorded one (`uncapSettings`); its log is closed after. */
const eventsOfRerun = async (rerunLog: SessionEventLog, sessionId: string, capped: Recorded['capped']): Promise<SessionEvent[]> => {
  const again: SessionEvent[] = [];
  for await (const event of rerunLog.read(sessionId)) again.push(uncapSettings(event, capped));
  await rerunLog.close();
  return again;
};

/** The events compared: checkpoint.taken left out (storage bookkeeping), and event.erased (the log's record of an erasure). */
const comparedEvents = (events: readonly SessionEvent[]): SessionEvent[] => events.filter((e) => e.type !== 'checkpoint.taken' && e.type !== 'event.erased');

/** What the comparison stages share: both event lists, the steps that held erased content, and those found to differ there. */
interface Comparison {
  readonly recorded: readonly SessionEvent[];
  readonly again: readonly SessionEvent[];
  /** A step whose projection held erased content re-runs from placeholders: what differs there is the erasure, not a divergence. */
  readonly erasedSteps: ReadonlySet<number>;
  readonly erasedFound: Set<number>;
  readonly notes: string[];
}

/** The event fields of settings the caller replaced: a replaced setting is not a divergence by itself, what it changes downstream is. */
const overriddenFields = (options: ReplayOptions): Set<string> =>
  new Set<string>([
    ...(options.budget !== undefined ? ['context.projected.budget'] : []),
    ...(options.projector !== undefined ? ['context.projected.projector', 'context.projected.tokenizer'] : []),
    ...(options.policy !== undefined ? ['memory.compacted.policy', 'compaction.failed.policy', 'compaction.skipped.policy'] : []),
  ]);

/** The first event where the re-run differs from the recording (a difference in a step that held erased content is noted, not counted). */
const firstDivergence = (c: Comparison, overridden: ReadonlySet<string>): Divergence | undefined => {
  const a = c.recorded;
  const b = c.again;
  let first: Divergence | undefined;
  let step: number | undefined;
  for (let i = 0; i < Math.max(a.length, b.length) && !first; i++) {
    const recorded = a[i];
    const replayed = b[i];
    if (recorded?.type === 'step.started') step = recorded.step;
    if (!recorded || !replayed) {
      first = { step, seq: recorded?.seq ?? replayed!.seq, type: (recorded ?? replayed)!.type, fields: [recorded ? 'missing in the re-run' : 'not in the recording'] };
      break;
    }
    const fields = recorded.type !== replayed.type ? ['type'] : differingFields(recorded, replayed, overridden);
    if (fields.length === 0) continue;
    const at = (recorded as { step?: number }).step ?? step;
    if (recorded.type === replayed.type && (recorded.erased !== undefined || (at !== undefined && c.erasedSteps.has(at)))) {
      if (at !== undefined) c.erasedFound.add(at);
      continue;
    }
    first = { step: at, seq: recorded.seq, type: recorded.type, fields };
  }
  if (first && (first.type === 'memory.compacted' || first.type.startsWith('compaction.'))) {
    c.notes.push(`event comparison stopped at the first compaction that differs (seq ${first.seq}, step ${first.step ?? '?'}); later steps are compared by the content sent`);
  } else if (first) {
    c.notes.push(`event comparison stopped at seq ${first.seq}`);
  }
  return first;
};

/** The digests of each step's projections, by step number (a step retried after an overflow projects again). */
const digestsOf = (events: readonly SessionEvent[]): Map<number | undefined, string[]> => {
  const map = new Map<number | undefined, string[]>();
  for (const p of ofType(events, 'context.projected')) map.set(p.step, [...(map.get(p.step) ?? []), p.digest]);
  return map;
};

/** The steps that diverged, in order: those whose content sent differs, the first divergence's, and those the replay's code cap cut short. */
const divergentSteps = (c: Comparison, first: Divergence | undefined, capped: Recorded['capped']): number[] => {
  // Steps compared by what was sent (digest of the items), by step number (a step retried after an overflow projects again).
  const again_ = digestsOf(c.again);
  const differing = [...digestsOf(c.recorded)].filter(([stepNumber, digests]) => canonicalJson(again_.get(stepNumber) ?? []) !== canonicalJson(digests)).map(([stepNumber]) => stepNumber ?? 0);
  for (const stepNumber of differing) if (c.erasedSteps.has(stepNumber)) c.erasedFound.add(stepNumber);
  const divergent = differing.filter((stepNumber) => !c.erasedSteps.has(stepNumber));
  if (first?.step !== undefined && !divergent.includes(first.step)) divergent.push(first.step);
  for (const step of cappedSteps(c.again, capped)) {
    c.notes.push(`step ${step}: the code ran into the replay's cap of ${capped!.capMs} ms (recorded limit ${capped!.recordedMs} ms)`);
    if (!divergent.includes(step)) divergent.push(step);
  }
  // A call that never started in the recording (its deadline passed while it waited for a worker) depended on how
  // busy the recording host was; the re-run runs its code.
  const rerunResults = new Map(ofType(c.again, 'tool.result').map((r) => [r.callId, r.output]));
  for (const r of ofType(c.recorded, 'tool.result')) {
    if (r.name !== EXECUTE_JAVASCRIPT || !r.output.includes('(it never started: ') || rerunResults.get(r.callId) === r.output) continue;
    c.notes.push(`step ${r.step ?? '?'}: call ${r.callId} never started in the recording (its deadline passed before its code started); the re-run ran the code`);
  }
  return divergent.sort((x, y) => x - y);
};

/** Compares the re-run with the recording: event by event up to the first divergence, then step by step by what was sent. */
const compareRerun = (recordedEvents: readonly SessionEvent[], again: readonly SessionEvent[], { notes, capped }: Recorded, options: ReplayOptions): ReplayResult => {
  const c: Comparison = { recorded: comparedEvents(recordedEvents), again: comparedEvents(again), erasedSteps: erasedStepsOf(recordedEvents), erasedFound: new Set<number>(), notes };
  const first = firstDivergence(c, overriddenFields(options));
  const divergent = divergentSteps(c, first, capped);
  const erased = [...c.erasedFound].filter((s) => !divergent.includes(s)).sort((x, y) => x - y);
  return {
    mode: 'rerun',
    identical: first === undefined,
    steps: ofType(c.recorded, 'context.projected').length,
    divergentSteps: divergent.length,
    divergentStepNumbers: divergent,
    ...(first ? { firstDivergence: first } : {}),
    ...(erased.length > 0 ? { erasedSteps: erased.length, erasedStepNumbers: erased } : {}),
    notes,
  };
};

/**
 * Runs the recorded session again in a fresh in-memory log and compares event by event: read the recording, rebuild
 * its agent answering from it, drive its runs again, then compare.
 */
export const rerunSession = async (log: SessionEventLog, sessionId: string, options: ReplayOptions): Promise<ReplayResult> => {
  const recordedEvents = await readRecording(log, sessionId, options);
  const recorded = recordedSettings(recordedEvents, options);
  const rerun = await startRerun(recordedEvents, recorded, sessionId, options);
  try {
    await driveRecording(rerun, recordedEvents);
  } finally {
    await stopRerun(rerun);
  }
  options.signal?.throwIfAborted();
  return compareRerun(recordedEvents, await eventsOfRerun(rerun.log, sessionId, recorded.capped), recorded, options);
};
