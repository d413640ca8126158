// For `generateText` / `streamText` users: record each step into a session of the log and send the model a projection.
import { randomUUID } from 'node:crypto';
import type { LanguageModel, ModelMessage } from 'ai';
import { InvalidOptionsError } from '../../base/errors.js';
import type { MemoryItem } from '../../items/index.js';
import type { SessionEventLog } from '../../log/index.js';
import type { NewSessionEvent } from '../../events/index.js';
import { openSession, type AgentSession } from '../../session/index.js';
import { modelRequestedEvent, recordProjection, resolveProjection, type BridgeProjectionOptions, type ProjectionStep } from '../shared/projection.js';
import { checkModelMessages, fromModelMessages, isErrorToolOutput, toModelMessages, toolOutputText } from './messages.js';
import { inputChecks } from '../shared/input.js';

/** Options of {@link createAiSdkRecorder}. */
export interface AiSdkRecorderOptions extends BridgeProjectionOptions {
  /** The session to record into (created when new, continued when it exists). Default: a fresh id. */
  readonly sessionId?: string;
  /** Makes session and run ids (default `randomUUID`). */
  readonly ids?: () => string;
  /** Recorded in `session.started` of a new session. */
  readonly metadata?: Record<string, unknown>;
}

/** The minimum of a step result the recorder reads (ai 5, 6 and 7 `StepResult`). */
export interface AiSdkStepResult {
  readonly text: string;
  readonly toolCalls: readonly unknown[];
  readonly usage?: unknown;
  readonly response: { readonly id?: string; readonly messages: readonly ModelMessage[] };
}

/**
 * The minimum of `prepareStep`'s options the recorder reads. ai 5 and 6 give the whole conversation as `messages`;
 * ai 7 gives it apart, as `initialMessages` (the call's) and `responseMessages` (the steps' answers so far), its
 * `messages` being what the previous step sent (the projection) and that step's answer.
 */
export interface AiSdkPrepareStepOptions {
  readonly stepNumber: number;
  readonly model: LanguageModel;
  readonly messages: ModelMessage[];
  /** ai 7: the messages the call was given. */
  readonly initialMessages?: ModelMessage[];
  /** ai 7: the response messages of the call's steps so far. */
  readonly responseMessages?: ModelMessage[];
}

/** What {@link createAiSdkRecorder} gives: the session, and the callbacks to hand to `generateText` / `streamText`. */
export interface AiSdkRecorder {
  readonly sessionId: string;
  readonly session: AgentSession;
  /**
   * `prepareStep`: records the messages the step starts from, projects memory, records the projection, returns
   * `{ model, messages }`: the step's model, observed, so `model.requested` records the system prompt, tools and
   * settings the AI SDK sends it.
   */
  readonly prepareStep: (options: AiSdkPrepareStepOptions) => Promise<{ model: LanguageModel; messages: ModelMessage[] }>;
  /** `onStepFinish`: records the step's answer (assistant messages, tool results) and the end of the step. */
  readonly onStepFinish: (step: AiSdkStepResult) => Promise<void>;
  /** `onFinish`: records the end of a run that `stopWhen` stopped after a tool call (a step without tool calls already ended it). */
  readonly onFinish: (result: { readonly text: string; readonly steps: readonly unknown[] }) => Promise<void>;
}

const modelIdOf = (model: LanguageModel): string => (typeof model === 'string' ? model : `${model.provider}:${model.modelId}`);

type Json = Record<string, unknown>;

/** A JSON copy (functions, signals and undefined values left out). */
const jsonCopy = (value: unknown): Json => JSON.parse(JSON.stringify(value ?? {})) as Json;

/** Call options that are not the request's settings: the prompt and tools (recorded apart), what is not data, and streamText's includeRawChunks (transport, not a setting: a streamed step records what a generated one does). */
const NOT_SETTINGS = new Set(['prompt', 'tools', 'abortSignal', 'headers', 'includeRawChunks']);

/**
 * What the AI SDK sent a model, from its call options (`LanguageModelV2CallOptions` / `V3`): the system prompt (the
 * prompt's leading system messages beyond `projectedSystem`, those of the projection), the tools as tool specs
 * (function tools `{type, name, description, parameters}`; provider tools as sent) and the other settings.
 */
export const requestSentByAiSdk = (
  callOptions: unknown,
  projectedSystem: number,
): { systemPrompt?: string; tools: Json[]; settings: Json } => {
  const options = (typeof callOptions === 'object' && callOptions !== null ? callOptions : {}) as Json;
  const prompt = Array.isArray(options['prompt']) ? (options['prompt'] as { role?: unknown; content?: unknown }[]) : [];
  let leading = 0;
  while (leading < prompt.length && prompt[leading]?.role === 'system') leading++;
  const system = prompt
    .slice(0, Math.max(0, leading - projectedSystem))
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
  const tools = (Array.isArray(options['tools']) ? (options['tools'] as Json[]) : []).map((tool) =>
    tool['type'] === 'function'
      ? jsonCopy({ type: 'function', name: tool['name'], description: tool['description'], parameters: tool['inputSchema'] ?? tool['parameters'], providerOptions: tool['providerOptions'] })
      : jsonCopy(tool),
  );
  const settings = jsonCopy(Object.fromEntries(Object.entries(options).filter(([key, value]) => !NOT_SETTINGS.has(key) && typeof value !== 'function')));
  return { ...(system.length > 0 ? { systemPrompt: system.join('\n\n') } : {}), tools, settings };
};

/** The model with `doGenerate` / `doStream` observed: `onCall` runs with the call options before the model is called. */
const observedModel = (model: Exclude<LanguageModel, string>, onCall: (callOptions: unknown) => Promise<void>): LanguageModel =>
  new Proxy(model, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if ((key === 'doGenerate' || key === 'doStream') && typeof value === 'function') {
        return async (callOptions: unknown) => {
          await onCall(callOptions);
          return (value as (o: unknown) => unknown).call(target, callOptions);
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });

const usageRecord = (usage: unknown): Record<string, unknown> | undefined =>
  typeof usage === 'object' && usage !== null ? (JSON.parse(JSON.stringify(usage)) as Record<string, unknown>) : undefined;

/**
 * Records a `generateText` / `streamText` conversation into a session of the log. Before each step,
 * `prepareStep` records the new messages (user input; tool results), projects the session's memory with
 * the projector and budget, records `context.projected` and `model.requested`, and sends the model the
 * projection instead of the whole history; `onStepFinish` records the model's answer and its tool
 * results; `onFinish` closes the run. The session can then be audited, replayed and checked with
 * `checkSessionLaws`. Pass the whole conversation to every call of the same recorder (as `messages`);
 * what was recorded before is not recorded again.
 * @example
 * const recorder = await createAiSdkRecorder(log, { contextBudget: { maxTokens: 16_000 } });
 * const result = await generateText({
 *   model, tools, messages, stopWhen: stepCountIs(10),
 *   prepareStep: recorder.prepareStep, onStepFinish: recorder.onStepFinish, onFinish: recorder.onFinish,
 * });
 */
export const createAiSdkRecorder = async (log: SessionEventLog, options: AiSdkRecorderOptions = {}): Promise<AiSdkRecorder> => {
  const resolved = resolveProjection(options);
  const ids = options.ids ?? randomUUID;
  const session = await openSession(log, {
    id: options.sessionId ?? ids(),
    ...(options.metadata ? { metadata: { ...options.metadata, bridge: 'ai-sdk' } } : { metadata: { bridge: 'ai-sdk' } }),
  });
  // Step count and open run, from the log, so a continued session keeps counting.
  let lastStep = 0;
  let openRunId: string | undefined;
  for await (const event of log.read(session.id)) {
    if (event.type === 'step.started') lastStep = Math.max(lastStep, event.step);
    else if (event.type === 'run.started') openRunId = event.runId;
    else if ((event.type === 'run.finished' || event.type === 'run.failed') && event.runId === openRunId) openRunId = undefined;
  }
  let recordedMessages = 0;
  let callBase = 0;
  /**
   * How many messages of the conversation come before the first of a finishing step's `response.messages`: the
   * call's (callBase) in ai 5 and 6, whose step results hold every response message of the call so far; the
   * step's own start in ai 7, whose step results hold the step's messages only.
   */
  let responseBase = 0;
  let currentStep: number | undefined;
  let stepsThisRun = 0;
  /** The prepared step whose request the observed model records on its first call (a retry is the same request). */
  let pendingRequest: { step: ProjectionStep; itemCount: number; digest: string; projectedSystem: number } | undefined;
  // The callbacks may overlap (a stream's callbacks are not always awaited): one queue keeps events in order.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work);
    queue = next.catch(() => undefined);
    return next;
  };

  const recordMessages = async (messages: readonly ModelMessage[], step: number | undefined, runId: string, prefix: string): Promise<void> => {
    const events: NewSessionEvent[] = [];
    let pendingInput: MemoryItem[] = [];
    const flushInput = (): void => {
      if (pendingInput.length > 0) events.push({ type: 'user.input', items: pendingInput });
      pendingInput = [];
    };
    messages.forEach((message, index) => {
      if (message.role === 'assistant') {
        flushInput();
        const items = fromModelMessages([message], { reasoningIdPrefix: `${prefix}_${index}`, undefinedKeys: 'drop' });
        events.push({ type: 'model.responded', ...(step !== undefined ? { step } : {}), runId, items });
      } else if (message.role === 'tool') {
        flushInput();
        const others: unknown[] = [];
        for (const part of message.content) {
          if (part.type === 'tool-result') {
            events.push({
              type: 'tool.result',
              callId: part.toolCallId,
              name: part.toolName,
              output: toolOutputText(part.output),
              isError: isErrorToolOutput(part.output),
              ...(step !== undefined ? { step } : {}),
            });
          } else others.push(part);
        }
        if (others.length > 0) events.push({ type: 'user.input', items: fromModelMessages([{ ...message, content: others } as ModelMessage], { undefinedKeys: 'drop' }) });
      } else {
        pendingInput.push(...fromModelMessages([message], { undefinedKeys: 'drop' }));
      }
    });
    flushInput();
    if (events.length > 0) await session.record(events);
  };

  const prepareStep: AiSdkRecorder['prepareStep'] = ({ stepNumber, model, messages: given, initialMessages, responseMessages }) =>
    serial(async () => {
      // ai 7 gives the conversation in two parts (its `messages` are the previous step's projection and answer).
      const parts = initialMessages !== undefined && responseMessages !== undefined ? { initialMessages, responseMessages } : undefined;
      const messages = parts ? [...parts.initialMessages, ...parts.responseMessages] : given;
      // Malformed messages are refused by name before anything is recorded.
      checkModelMessages(inputChecks('ai-sdk', 'prepareStep'), messages);
      if (stepNumber === 0) {
        if (openRunId) await session.record([{ type: 'run.failed', runId: openRunId, reason: 'interrupted', message: 'superseded by a new generateText call' }]);
        openRunId = ids();
        stepsThisRun = 0;
        await session.record([{ type: 'run.started', runId: openRunId, runtime: 'ai-sdk' }]);
      }
      const runId = openRunId ?? ids();
      openRunId = runId;
      if (messages.length < recordedMessages) {
        throw new InvalidOptionsError(`the ai-sdk recorder of session ${session.id}`, [
          { path: 'messages', message: `got ${messages.length} messages, ${recordedMessages} were already recorded; pass the whole conversation (with ai 7, a result's responseMessages: its response.messages are the last step's only)` },
        ]);
      }
      await recordMessages(messages.slice(recordedMessages), currentStep, runId, `reasoning_${session.id}_${recordedMessages}`);
      recordedMessages = messages.length;
      if (stepNumber === 0) callBase = messages.length;
      responseBase = parts ? messages.length : callBase;
      const step = ++lastStep;
      currentStep = step;
      stepsThisRun += 1;
      if (typeof model === 'string') {
        throw new InvalidOptionsError(`the ai-sdk recorder of session ${session.id}`, [
          { path: 'model', message: `a model given by id (${JSON.stringify(model)}) cannot be observed, so what it is sent would go unrecorded; pass the provider's model object (openai('…'), gateway('…'))` },
        ]);
      }
      await session.record([{ type: 'step.started', runId, step }]);
      const projectionStep: ProjectionStep = { step, runId, model: modelIdOf(model) };
      const projection = await recordProjection(session, resolved, projectionStep, { request: false });
      const sent = toModelMessages(projection.items);
      let projectedSystem = 0;
      while (projectedSystem < sent.length && sent[projectedSystem]?.role === 'system') projectedSystem++;
      pendingRequest = { step: projectionStep, itemCount: projection.items.length, digest: projection.digest, projectedSystem };
      return { model: observedModel(model, recordRequest), messages: sent };
    });

  const recordRequest = (callOptions: unknown): Promise<void> =>
    serial(async () => {
      const pending = pendingRequest;
      if (!pending) return;
      pendingRequest = undefined;
      const sent = requestSentByAiSdk(callOptions, pending.projectedSystem);
      await session.record([modelRequestedEvent({ ...pending.step, ...sent }, pending.itemCount, pending.digest)]);
    });

  const onStepFinish: AiSdkRecorder['onStepFinish'] = (result) =>
    serial(async () => {
      const checks = inputChecks('ai-sdk', 'onStepFinish');
      const response = checks.record(checks.record(result, undefined, 'the step result')['response'], undefined, 'response');
      checkModelMessages(checks, response['messages']);
      const runId = openRunId;
      const step = currentStep;
      if (!runId || step === undefined) {
        throw new InvalidOptionsError(`the ai-sdk recorder of session ${session.id}`, [
          { path: '', message: 'onStepFinish without prepareStep; pass both' },
        ]);
      }
      const all = result.response.messages;
      const fresh = all.slice(Math.max(0, recordedMessages - responseBase));
      const events: NewSessionEvent[] = [];
      let usageGiven = false;
      fresh.forEach((message, index) => {
        if (message.role === 'assistant') {
          const items = fromModelMessages([message], { reasoningIdPrefix: `reasoning_${result.response.id ?? session.id}_${index}`, undefinedKeys: 'drop' });
          const usage = usageGiven ? undefined : usageRecord(result.usage);
          usageGiven = true;
          events.push({ type: 'model.responded', step, runId, items, ...(result.text.length > 0 ? { outputText: result.text } : {}), ...(usage ? { usage } : {}) });
        } else if (message.role === 'tool') {
          for (const part of message.content) {
            if (part.type !== 'tool-result') continue;
            events.push({ type: 'tool.result', callId: part.toolCallId, name: part.toolName, output: toolOutputText(part.output), isError: isErrorToolOutput(part.output), step });
          }
        }
      });
      events.push({ type: 'step.ended', runId, step, toolCalls: result.toolCalls.length });
      // A step without tool calls ends the loop (ai 5's generateText has no onFinish); a run stopped by
      // `stopWhen` after a tool call is closed by onFinish.
      const final = result.toolCalls.length === 0;
      if (final) events.push({ type: 'run.finished', runId, steps: stepsThisRun, outputText: result.text });
      await session.record(events);
      recordedMessages = responseBase + all.length;
      if (final) openRunId = undefined;
    });

  const onFinish: AiSdkRecorder['onFinish'] = (result) =>
    serial(async () => {
      if (!openRunId) return;
      await session.record([{ type: 'run.finished', runId: openRunId, steps: stepsThisRun, outputText: result.text }]);
      openRunId = undefined;
    });

  return { sessionId: session.id, session, prepareStep, onStepFinish, onFinish };
};
