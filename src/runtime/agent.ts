// The step loop: every step of every runtime goes through `executeStep` (compact, project, call, tools, record).
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { CompactPolicy } from '../compact/index.js';
import {
  DefaultContextProjector,
  approxTokenizer,
  parseContextBudget,
  tokenizerFromName,
  projectForModel,
  isPrefetchingTokenizer,
  providerTextsOf,
  type ContextBudget,
  type ContextProjector,
  type Tokenizer,
} from '../context/index.js';
import {
  LIBRARY_VERSION,
  canonicalJson,
  digestOf,
  encodeReportFates,
  errorText,
  isInvalidEventError,
  issuesOf,
  newEventSchemaFor,
  type NewSessionEvent,
  type NewSessionEventOf,
  type SessionEvent,
} from '../events/index.js';
import { parseOptions } from '../events/options.js';
import { assistantMessage, isMessage, textOf, toolCallsOf, unansweredCalls, type MemoryItem } from '../items/index.js';
import { UnknownSessionError, createMemoryLog, type SessionEventLog } from '../log/index.js';
import { isAbandonedWorkError, untilAborted, type ModelClient, type ModelRequest, type ToolSpec } from '../model/index.js';
import { openSession, type AgentSession } from '../session/index.js';
import { outcomeUnlessAbandoned } from './abandon.js';
import { executeJavascriptTool, type NestedToolCaller } from './codeact.js';
import { InvalidOptionsError } from '../errors.js';
import {
  AgentRunError,
  CallAbandonedError,
  DuplicateToolError,
  NothingToContinueError,
  SessionBusyError,
  ToolFailedError,
  type RunFailureReason,
} from './errors.js';
import type { AgentHooks, RuntimeNotification, TurnContext } from './hooks.js';
import { normalizeModelAnswer } from './normalize.js';
import { AgentOptionsSchema, RunOptionsSchema } from './options.js';
import { loadCodeSandbox } from './sandbox/load.js';
import { parseCodeActLimits } from './sandbox/options.js';
import { runTool, toolSpec, type FactEvent, type Tool, type ToolContext } from './tools.js';

export type RuntimeKind = 'react' | 'deepResearch' | 'codeAct';

export interface AgentOptions {
  readonly modelClient: ModelClient;
  readonly model: string;
  readonly systemPrompt?: string;
  readonly tools?: readonly Tool[];
  /** Where sessions are recorded (default: a fresh in-memory log). */
  readonly log?: SessionEventLog;
  /** Default `new DefaultContextProjector()`. */
  readonly contextProjector?: ContextProjector;
  readonly contextBudget?: ContextBudget;
  /** Checked at the top of every step (automatic compaction); absent = no automatic compaction. */
  readonly compactPolicy?: CompactPolicy;
  readonly hooks?: AgentHooks;
  /** Every event appended, and a `CONTEXT_PROJECTED` notification (plus its alias `MEMORY_COMPRESS`) with the ContextReport of each prompt built. */
  readonly onEvent?: (notification: RuntimeNotification) => void;
  /** Most steps one `run()` may take (default 50). */
  readonly maxSteps?: number;
  /** Makes session and run ids (default `randomUUID`). */
  readonly ids?: () => string;
  /** Memory checkpoint interval in events (default 10,000). */
  readonly checkpointEvery?: number;
  /** CodeAct: wall-clock limit of one `execute_javascript` call, tool calls included (default 5,000 ms). */
  readonly codeTimeoutMs?: number;
  /** CodeAct: memory of one `execute_javascript` call's sandbox, a hard cap (default 64 MiB, at least 16 MiB). */
  readonly codeMemoryLimitBytes?: number;
}

// Every option has a schema entry: adding an option without one does not compile.
void (AgentOptionsSchema.shape satisfies Record<keyof AgentOptions, z.ZodType>);

export interface RunResult {
  readonly runId: string;
  readonly outputText: string;
  /** Steps this call of `run` took. */
  readonly steps: number;
  /** The items this call of `run` added after the input (model output, tool results) that are still in memory. */
  readonly items: readonly MemoryItem[];
}

export interface RunOptions {
  readonly signal?: AbortSignal;
}

interface StepPlan {
  readonly systemPrompt: string | undefined;
  readonly tools: readonly Tool[];
}

interface LastPrompt {
  readonly seq: number;
  readonly key: string;
}

/** The canonical JSON of a request's prompt, to see whether it changed since the last one recorded. */
const promptKey = (systemPrompt: string | undefined, tools: readonly unknown[]): string =>
  canonicalJson({ systemPrompt: systemPrompt ?? null, tools });

interface StepOutcome {
  readonly toolCalls: number;
  readonly outputText: string;
  readonly items: readonly MemoryItem[];
}

const DEEP_RESEARCH_PLAN =
  'First write a short numbered research plan for the request (one step per line). Do not call tools and do not answer yet.';
const DEEP_RESEARCH_RESEARCH = 'Follow your research plan, using the tools. When you have what you need, reply without calling a tool.';
const DEEP_RESEARCH_REPORT = 'Write the final report for the request now, from your research. Do not call tools.';
const CODEACT_PROMPT =
  'Solve the task by writing JavaScript and running it with the execute_javascript tool. Reply without a tool call when done.';

const withSuffix = (base: string | undefined, suffix: string): string => (base ? `${base}\n\n${suffix}` : suffix);

/** The numbered or bulleted lines of a plan (all non-empty lines when there are none). */
export const parsePlan = (text: string): string[] => {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
  const marked = lines.map((l) => /^(?:\d+[.)]|[-*•])\s+(.*)$/.exec(l)?.[1]).filter((l): l is string => l !== undefined);
  return marked.length > 0 ? marked : lines;
};

const errorMessage = errorText;

/** The items a `run` input brings in, validated as `user.input` before anything is written. */
const inputItemsOf = (input: unknown): { items: MemoryItem[] } | { problem: string } => {
  const items: unknown =
    typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : Array.isArray(input) ? [...(input as unknown[])] : [input];
  if (typeof input !== 'string' && (input === null || typeof input !== 'object')) {
    return { problem: `expected a string, an item or a list of items, got ${input === null ? 'null' : typeof input}` };
  }
  const parsed = newEventSchemaFor('user.input').safeParse({ type: 'user.input', items });
  if (parsed.success) return { items: items as MemoryItem[] };
  return { problem: issuesOf(parsed.error).map((i) => `${i.path === '' ? '(root)' : i.path.replace(/^items\./, 'input.')}: ${i.message}`).join('; ') };
};

/** A session an agent runs in: `run(input)` for a new request, `run()` to continue an interrupted run. */
export class AgentRunSession {
  #step: number;
  #openRunId: string | undefined;
  #openRunHasPlan: boolean;
  #running = false;
  /** The last `model.requested` that carried the prompt: its seq and the canonical JSON of prompt and tools. */
  #lastPrompt: LastPrompt | undefined;

  constructor(
    readonly agent: Agent,
    readonly session: AgentSession,
    lastStep: number,
    openRun: { runId: string; hasPlan: boolean } | undefined,
  ) {
    this.#step = lastStep;
    this.#openRunId = openRun?.runId;
    this.#openRunHasPlan = openRun?.hasPlan ?? false;
  }

  get id(): string {
    return this.session.id;
  }

  get memory(): AgentSession['memory'] {
    return this.session.memory;
  }

  /** The last step number of this session (steps keep counting across runs and resumes). */
  get lastStep(): number {
    return this.#step;
  }

  /** The id of a run that started and has not finished or failed (after a crash or interruption). */
  get interruptedRunId(): string | undefined {
    return this.#openRunId;
  }

  /**
   * Runs the agent on `input` until the model answers without a tool call; without input, continues the
   * interrupted run. Rejects with an `AgentRunError` (and records `run.failed`) when a bound, an abort or an error ends it.
   */
  async run(input?: string | MemoryItem | readonly MemoryItem[], options: RunOptions = {}): Promise<RunResult> {
    if (this.#running) throw new SessionBusyError(this.id);
    parseOptions(RunOptionsSchema, options, 'run');
    this.#running = true;
    try {
      // CodeAct's optional QuickJS peers: a missing install fails here, before anything is recorded.
      if (this.agent.kind === 'codeAct') await loadCodeSandbox();
      return await this.#run(input, options);
    } finally {
      this.#running = false;
    }
  }

  async #run(input: string | MemoryItem | readonly MemoryItem[] | undefined, options: RunOptions): Promise<RunResult> {
    const { agent, session } = this;
    const signal = options.signal ?? new AbortController().signal;
    let runId: string;
    if (input === undefined) {
      if (!this.#openRunId) throw new NothingToContinueError(this.id);
      runId = this.#openRunId;
    } else {
      // Validate first; then the superseded run, the new run and its input are one atomic append.
      const parsed = inputItemsOf(input);
      if ('problem' in parsed) throw new AgentRunError('invalid-input', `run: invalid input: ${parsed.problem}`, '', this.id);
      const opening: NewSessionEvent[] = [];
      if (this.#openRunId) {
        opening.push({ type: 'run.failed', runId: this.#openRunId, reason: 'interrupted', message: 'superseded by a new run' });
      }
      runId = agent.ids();
      opening.push({ type: 'run.started', runId, runtime: agent.kind, settings: agent.recordedSettings() }, { type: 'user.input', items: parsed.items });
      try {
        await this.#record(opening);
      } catch (error) {
        if (isInvalidEventError(error)) throw new AgentRunError('invalid-input', `run: invalid input: ${error.message}`, '', this.id, { cause: error });
        throw error;
      }
      this.#openRunHasPlan = false;
    }
    this.#openRunId = runId;
    const before = new Set(session.memory.state().entries.map((e) => e.id));
    let steps = 0;
    const fail = async (reason: RunFailureReason, message: string, cause?: unknown): Promise<never> => {
      await this.#answerUnanswered(runId, this.#step, `run ${reason === 'aborted' ? 'aborted' : reason === 'max-steps' ? 'stopped at maxSteps' : 'failed'}`).catch(() => undefined);
      await this.#record([{ type: 'run.failed', runId, reason, message, step: this.#step }]).catch(() => undefined);
      this.#openRunId = undefined;
      throw new AgentRunError(reason, message, runId, this.id, cause === undefined ? undefined : { cause });
    };

    let phase: 'plan' | 'research' | 'report' | 'main' =
      agent.kind === 'deepResearch' ? (this.#openRunHasPlan ? 'research' : 'plan') : 'main';
    for (;;) {
      if (signal.aborted) return fail('aborted', `run aborted: ${errorMessage(signal.reason)}`, signal.reason);
      if (steps >= agent.maxSteps) return fail('max-steps', `run stopped after maxSteps (${agent.maxSteps}) steps without a final answer`);
      steps += 1;
      const step = ++this.#step;
      let outcome: StepOutcome;
      try {
        outcome = await this.#executeStep(runId, step, this.#planFor(phase), signal);
      } catch (error) {
        if (signal.aborted) {
          const late = isAbandonedWorkError(error) ? ` (the run did not wait for ${error.what}: a late answer will be ignored)` : '';
          return fail('aborted', `run aborted: ${errorMessage(signal.reason)}${late}`, error);
        }
        return fail('error', errorMessage(error), error);
      }
      if (phase === 'plan') {
        await this.#record([{ type: 'plan.created', runId, step, plan: parsePlan(outcome.outputText), text: outcome.outputText }]);
        this.#openRunHasPlan = true;
        phase = 'research';
        continue;
      }
      if (outcome.toolCalls > 0) continue;
      if (phase === 'research') {
        phase = 'report';
        continue;
      }
      await this.#record([{ type: 'run.finished', runId, steps, outputText: outcome.outputText }]);
      this.#openRunId = undefined;
      const produced = session.memory.state().entries.filter((e) => !before.has(e.id));
      return { runId, outputText: outcome.outputText, steps, items: produced.map((e) => e.item) };
    }
  }

  #planFor(phase: 'plan' | 'research' | 'report' | 'main'): StepPlan {
    const { agent } = this;
    switch (phase) {
      case 'plan':
        return { systemPrompt: withSuffix(agent.options.systemPrompt, DEEP_RESEARCH_PLAN), tools: [] };
      case 'research':
        return { systemPrompt: withSuffix(agent.options.systemPrompt, DEEP_RESEARCH_RESEARCH), tools: agent.tools };
      case 'report':
        return { systemPrompt: withSuffix(agent.options.systemPrompt, DEEP_RESEARCH_REPORT), tools: [] };
      case 'main':
        return agent.kind === 'codeAct'
          ? { systemPrompt: withSuffix(agent.options.systemPrompt, CODEACT_PROMPT), tools: agent.tools }
          : { systemPrompt: agent.options.systemPrompt, tools: agent.tools };
    }
  }

  #record(events: readonly NewSessionEvent[]): Promise<readonly SessionEvent[]> {
    return this.session.record(events);
  }

  async #hook<K extends keyof AgentHooks>(name: K, context: Parameters<NonNullable<AgentHooks[K]>>[0] & TurnContext): Promise<void> {
    const hook = this.agent.options.hooks?.[name] as ((c: unknown) => unknown) | undefined;
    if (!hook) return;
    try {
      await hook.call(this.agent.options.hooks, context);
    } catch (error) {
      await this.#record([{ type: 'hook.failed', hook: name, error: errorMessage(error), step: context.step, runId: context.runId }]);
    }
  }

  /** Gives every call in memory without an output an error result, so the model never sees an unanswered call. */
  async #answerUnanswered(runId: string, step: number, why: string): Promise<void> {
    // A call without a usable id (an old log, from before answers were normalised) cannot be answered; projection drops it.
    const missing = unansweredCalls(this.session.memory.state().entries.map((e) => e.item)).filter((c) => c.callId !== '');
    if (missing.length === 0) return;
    await this.#record(
      missing.map((call) => ({
        type: 'tool.result' as const,
        callId: call.callId,
        output: `Error: not executed: ${why}`,
        isError: true,
        ...(call.name ? { name: call.name } : {}),
        step,
      })),
    );
    void runId;
  }

  /** One step: compaction, projection, the model call, the tools, each recorded in that order. */
  async #executeStep(runId: string, step: number, plan: StepPlan, signal: AbortSignal): Promise<StepOutcome> {
    const { agent, session } = this;
    const turn: TurnContext = { sessionId: this.id, runId, step };
    await this.#record([{ type: 'step.started', runId, step }]);
    await this.#hook('beforeTurn', turn);
    const projectorDescription = agent.projector.describe();
    const tokenizerName = projectorDescription.settings['tokenizer'];
    const tokenizer = typeof tokenizerName === 'string' ? tokenizerName : undefined;
    await session.autoCompactIfNecessary(agent.options.compactPolicy, {
      step,
      signal,
      tokenizer: (tokenizer !== undefined ? tokenizerFromName(tokenizer) : undefined) ?? approxTokenizer,
    });
    signal.throwIfAborted();
    // After compaction, so a policy that keeps a call but not its output cannot leave it unanswered.
    await this.#answerUnanswered(runId, step, 'the run was interrupted before this call ran');

    const entries = session.memory.getEntries();
    // A remote tokenizer (count_tokens) counts memory's texts now: projection is synchronous.
    const projectorTokenizer = (agent.projector as { readonly tokenizer?: Tokenizer }).tokenizer;
    let tokenCounts: Record<string, number> | undefined;
    if (projectorTokenizer && isPrefetchingTokenizer(projectorTokenizer)) {
      const texts = providerTextsOf(entries.map((e) => e.item));
      await projectorTokenizer.prefetch(texts, { signal });
      tokenCounts = projectorTokenizer.countsOf(texts);
    }
    // Any projector, then no tool output without its call (nor call without output): rule `orphan`.
    const projection = projectForModel(
      agent.projector,
      entries.map((e) => e.item),
      agent.budget,
    );
    const digest = digestOf(projection.items);
    // Fates once, as runs over memory's items (ids are memory's at this seq): size grows with fate changes, not memory.
    const { fates, ...reportSummary } = projection.report;
    await this.#record([
      {
        type: 'context.projected',
        step,
        runId,
        projector: projectorDescription,
        budget: { ...agent.budget },
        ...(tokenizer !== undefined ? { tokenizer } : {}),
        report: reportSummary,
        fateRuns: encodeReportFates(fates, entries.length),
        digest,
        ...(tokenCounts !== undefined ? { tokenCounts } : {}),
      },
    ]);
    agent.notify({ type: 'CONTEXT_PROJECTED', sessionId: this.id, runId, step, report: projection.report });
    agent.notify({ type: 'MEMORY_COMPRESS', sessionId: this.id, runId, step, report: projection.report });

    const specs: ToolSpec[] = plan.tools.map(toolSpec);
    const request: ModelRequest = {
      model: agent.options.model,
      ...(plan.systemPrompt !== undefined ? { systemPrompt: plan.systemPrompt } : {}),
      items: projection.items,
      ...(specs.length > 0 ? { tools: specs } : {}),
    };
    await this.#hook('beforeModelRequest', { ...turn, request, report: projection.report });
    const adapter = agent.options.modelClient.describeRequest?.(request);
    // The prompt and tool specs only when they changed since the last request that carried them.
    const tools = specs.map((s) => ({ ...s }));
    const key = promptKey(plan.systemPrompt, tools);
    const previous = this.#lastPrompt?.key === key ? this.#lastPrompt : undefined;
    const [requested] = await this.#record([
      {
        type: 'model.requested',
        step,
        runId,
        model: agent.options.model,
        ...(previous
          ? { promptSeq: previous.seq }
          : { ...(plan.systemPrompt !== undefined ? { systemPrompt: plan.systemPrompt } : {}), tools }),
        itemCount: projection.items.length,
        digest,
        ...(adapter !== undefined ? { adapter } : {}),
      },
    ]);
    if (!previous && requested) this.#lastPrompt = { seq: requested.seq, key };
    const started = performance.now();
    // A client that ignores the signal is not waited for; its late answer is never recorded.
    const answer = await untilAborted(
      Promise.resolve().then(() => agent.options.modelClient.create(request, { signal })),
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
    await this.#record([
      {
        type: 'model.responded',
        step,
        runId,
        items,
        ...(result.outputText !== undefined ? { outputText: result.outputText } : {}),
        ...(result.usage !== undefined ? { usage: { ...result.usage } } : {}),
        durationMs,
      },
    ]);
    await this.#hook('afterModelResponse', { ...turn, result, items });

    const calls = toolCallsOf(items);
    const byName = new Map(plan.tools.map((t) => [t.name, t]));
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]!;
      if (signal.aborted) break; // the rest get "not executed" results from the caller
      await this.#hook('beforeToolCall', { ...turn, call });
      const rejection = result.rejected.get(call.callId);
      let outcome: { output: string; isError: boolean };
      if (rejection !== undefined) {
        outcome = { output: rejection, isError: true };
      } else {
        const context = this.#toolContext(runId, step, call.callId, signal);
        try {
          // A tool that ignores the signal is not waited for; its late result and facts are never recorded.
          outcome = await untilAborted(runTool(byName.get(call.name), call.name, call.arguments, context), signal, `tool ${JSON.stringify(call.name)}`);
        } catch (error) {
          context.close();
          if (!isAbandonedWorkError(error)) throw error;
          await this.#record([
            { type: 'tool.result', callId: call.callId, output: `Error: ${error.message}`, isError: true, name: call.name, step },
          ]);
          throw error;
        }
        context.close();
      }
      await this.#record([
        { type: 'tool.result', callId: call.callId, output: outcome.output, isError: outcome.isError, name: call.name, step },
      ]);
      await this.#hook('afterToolCall', { ...turn, call, output: outcome.output, isError: outcome.isError });
    }
    if (signal.aborted) throw signal.reason ?? new AgentRunError('aborted', 'run aborted', runId, this.id);
    await this.#record([{ type: 'step.ended', runId, step, toolCalls: calls.length }]);
    const lastAssistant = [...items].reverse().find((i) => isMessage(i) && i.role === 'assistant');
    const outputText = result.outputText ?? (lastAssistant ? textOf(lastAssistant) : '');
    await this.#hook('afterTurn', { ...turn, toolCalls: calls.length, final: calls.length === 0 });
    return { toolCalls: calls.length, outputText, items };
  }

  #toolContext(runId: string, step: number, callId: string, signal: AbortSignal): ToolContext & { callTool: NestedToolCaller; close(): void } {
    let nested = 0;
    let open = true;
    const ensureOpen = (what: string): void => {
      if (!open) throw new CallAbandonedError(`${what} after call ${callId} ended (the run did not wait for it); not recorded`);
    };
    const context: ToolContext & { callTool: NestedToolCaller; close(): void } = {
      close: () => {
        open = false;
      },
      sessionId: this.id,
      runId,
      step,
      callId,
      signal,
      record: async (fact) => {
        ensureOpen(`context.record(${JSON.stringify(fact?.type)})`);
        await this.#record([fact]);
      },
      callTool: async (name, args, options) => {
        ensureOpen(`tools.${name}()`);
        nested += 1;
        const nestedId = `${callId}.${nested}`;
        const tool = this.agent.innerTools.find((t) => t.name === name);
        // options.signal aborts when the outer call ends first (CodeAct's deadline): the call is abandoned.
        const callSignal = options?.signal ?? signal;
        const record = async (fact: FactEvent): Promise<void> => {
          if (options?.signal?.aborted) throw new CallAbandonedError(`not recorded: the call was abandoned (${errorMessage(options.signal.reason)})`);
          await context.record(fact);
        };
        const running = runTool(tool, name, JSON.stringify(args ?? {}), { ...context, callId: nestedId, signal: callSignal, record });
        const outcome = await outcomeUnlessAbandoned(running, options?.signal);
        ensureOpen(`the result of tools.${name}()`);
        await this.#record([
          { type: 'tool.result', callId: nestedId, parentCallId: callId, name, output: outcome.output, isError: outcome.isError, step },
        ]);
        if (outcome.isError) throw new ToolFailedError(name, outcome.output.replace(/^Error: /, ''));
        return outcome.output;
      },
    };
    return context;
  }
}

/** An agent: a model, tools, a log, a projector, a budget and a compaction policy. */
export class Agent {
  readonly log: SessionEventLog;
  readonly projector: ContextProjector;
  readonly budget: ContextBudget;
  readonly maxSteps: number;
  readonly ids: () => string;
  /** Tools the model calls directly (CodeAct: only execute_javascript). */
  readonly tools: readonly Tool[];
  /** CodeAct: the user's tools, called from inside the code. */
  readonly innerTools: readonly Tool[];

  constructor(
    readonly kind: RuntimeKind,
    readonly options: AgentOptions,
  ) {
    parseOptions(AgentOptionsSchema, options, `Agents.${kind}`);
    // The CodeAct limits are checked for every runtime, so a NaN is never silently carried along.
    parseCodeActLimits({
      ...(options.codeTimeoutMs !== undefined ? { timeoutMs: options.codeTimeoutMs } : {}),
      ...(options.codeMemoryLimitBytes !== undefined ? { memoryLimitBytes: options.codeMemoryLimitBytes } : {}),
    });
    this.log = options.log ?? createMemoryLog();
    this.projector = options.contextProjector ?? new DefaultContextProjector();
    this.budget = parseContextBudget(options.contextBudget ?? {});
    this.maxSteps = options.maxSteps ?? 50;
    this.ids = options.ids ?? randomUUID;
    const userTools = options.tools ?? [];
    const names = new Set<string>();
    for (const tool of userTools) {
      if (names.has(tool.name)) throw new DuplicateToolError(tool.name);
      names.add(tool.name);
    }
    if (kind === 'codeAct') {
      this.innerTools = userTools;
      this.tools = [
        executeJavascriptTool(userTools, (context) => (context as ToolContext & { callTool: NestedToolCaller }).callTool, {
          ...(options.codeTimeoutMs !== undefined ? { timeoutMs: options.codeTimeoutMs } : {}),
          ...(options.codeMemoryLimitBytes !== undefined ? { memoryLimitBytes: options.codeMemoryLimitBytes } : {}),
        }),
      ];
    } else {
      this.innerTools = userTools;
      this.tools = userTools;
    }
  }

  /** What `run.started` records so a re-run can rebuild the agent: the settings that live outside the log. */
  recordedSettings(): NonNullable<NewSessionEventOf<'run.started'>['settings']> {
    return {
      libraryVersion: LIBRARY_VERSION,
      model: this.options.model,
      ...(this.options.systemPrompt !== undefined ? { systemPrompt: this.options.systemPrompt } : {}),
      maxSteps: this.maxSteps,
      ...(this.kind === 'codeAct' ? { codeTimeoutMs: this.options.codeTimeoutMs ?? 5000 } : {}),
      checkpointEvery: this.options.checkpointEvery ?? 10_000,
    };
  }

  notify(notification: RuntimeNotification): void {
    try {
      this.options.onEvent?.(notification);
    } catch {
      // a listener must not break the run
    }
  }

  /** Starts a new session in the agent's log. */
  newSession(): Promise<AgentRunSession> {
    return this.#open(this.ids());
  }

  /** Resumes a session from the log (memory, summary, last compaction, step count, an interrupted run). */
  async resumeSession(id: string): Promise<AgentRunSession> {
    if ((await this.log.head(id)) === 0) throw new UnknownSessionError(id);
    return this.#open(id);
  }

  /** The tokenizer of the projector, when it exposes one (the built-in projectors do). */
  #projectorTokenizer(): Tokenizer | undefined {
    const tokenizer = (this.projector as { readonly tokenizer?: unknown }).tokenizer;
    return tokenizer !== null &&
      typeof tokenizer === 'object' &&
      typeof (tokenizer as Tokenizer).name === 'string' &&
      (tokenizer as Tokenizer).name !== '' &&
      typeof (tokenizer as Tokenizer).count === 'function'
      ? (tokenizer as Tokenizer)
      : undefined;
  }

  async #open(id: string): Promise<AgentRunSession> {
    // One fold gives memory and run state (last step, open run, plan): checkpoint + tail. A resumed session
    // records the prompt again on its first request (model.requested refers back only within one process).
    const tokenizer = this.#projectorTokenizer();
    const session = await openSession(this.log, {
      id,
      ...(this.options.hooks ? { hooks: this.options.hooks } : {}),
      ...(this.options.checkpointEvery !== undefined ? { checkpointEvery: this.options.checkpointEvery } : {}),
      // Checkpoints save the counts the projector's tokenizer made, and a resume gives them back (decision 0017).
      ...(tokenizer !== undefined ? { tokenizer } : {}),
      onEvents: (events) => {
        for (const event of events) this.notify({ type: 'EVENT', event });
      },
    });
    const { run } = session.state();
    return new AgentRunSession(this, session, run.lastStep, run.openRun ?? undefined);
  }
}

/**
 * Builders for the three runtimes; all share one step loop.
 * @example const agent = Agents.react({ modelClient, model: 'gpt-4.1', tools, log, contextBudget: { maxTokens: 16_000 } })
 */
export const Agents = {
  react: (options: AgentOptions): Agent => new Agent('react', options),
  deepResearch: (options: AgentOptions): Agent => new Agent('deepResearch', options),
  codeAct: (options: AgentOptions): Agent => new Agent('codeAct', options),
} as const;
