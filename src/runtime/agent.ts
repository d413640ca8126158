// Agents and their sessions: the run loop (phases, failure, finish) over the step stages of step.ts.
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { CompactPolicy, CompactResult } from '../compact/index.js';
import { DefaultContextProjector, parseContextBudget, projectorTokenizer, type ContextBudget, type ContextProjector, type Tokenizer } from '../context/index.js';
import { InvalidEventError, type NewSessionEvent, type NewSessionEventOf, type SessionEventOf } from '../events/index.js';
import { LIBRARY_VERSION, errorText } from '../base/index.js';
import { InvalidOptionsError } from '../base/errors.js';
import { parseOptions } from '../base/options.js';
import type { MemoryItem } from '../items/index.js';
import { UnknownSessionError, createMemoryLog, ExpectedSeqConflictError, type SessionEventLog } from '../log/index.js';
import { flushDeferred } from '../session/index.js';
import { pendingApprovalsOf, type RunApproval, type RunState } from '../session/index.js';
import { AbandonedWorkError, ContextOverflowError, type ModelClient } from '../model/index.js';
import { openSession, type AgentSession, type RewindOptions, type RewindTarget } from '../session/index.js';
import { executeJavascriptTool, type NestedToolCaller } from './codeact.js';
import {
  AgentRunError,
  ApprovalConflictError,
  ApprovalNotPendingError,
  ApprovalsPendingError,
  DuplicateToolError,
  NothingToContinueError,
  SessionBusyError,
  type RunFailureReason,
} from './errors.js';
import type { AgentHooks, RuntimeNotification } from './hooks.js';
import { AgentOptionsSchema, ApprovalOptionsSchema, RunOptionsSchema } from './options.js';
import { firstPhase, parsePlan, phaseAfter, stepPlanFor, type RunPhase, type RuntimeKind } from './phases.js';
import { runInputItems } from './run-input.js';
import { loadCodeSandbox } from './sandbox/load.js';
import { parseCodeActLimits } from './sandbox/options.js';
import { InvalidCodeActOptionError } from './sandbox/errors.js';
import { createCodeSandboxPool, parseMaxWorkers, workerPoolOf, type CodeSandboxPool } from './sandbox/worker-pool.js';
import { callLimitOf, runPlannedCalls, type PendingApproval, type PlannedCall } from './run-tools.js';
import { executeStep, type StepOutcome } from './step.js';
import type { DeltaListener } from './stream.js';
import { answerUnansweredCalls, type StepSession } from './step-session.js';
import type { Tool, ToolContext, ToolOutcome } from './tools.js';
import { WORKING_MEMORY_TOOL, WorkingMemoryOptionsSchema, recallToolNameOf, seedingEvents, workingMemoryTool, type WorkingMemoryOptions } from './memory-tools/index.js';

export { parsePlan };
export type { RuntimeKind };

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
  /**
   * Count each item with the projector's tokenizer once it is stored in memory, in the background of the step, so
   * the next projection and a resume find it counted (openSession's `countTokensOnWrite`, decision 0038). Nothing is
   * recorded for it. Needs a projector with a `tokenizer` (the built-in ones have one). `session.close()` stops it.
   * Default false.
   */
  readonly countTokensOnWrite?: boolean;
  /**
   * How many times a step recovers from a provider's context overflow (`ContextOverflowError`): it records
   * `model.failed`, compacts with reason `overflow`, projects within a tighter budget and retries. Then the run fails
   * with reason `context-overflow`. Default 2; 0 fails at the first overflow.
   */
  readonly overflowRetries?: number;
  /**
   * CodeAct: wall-clock limit of one `execute_javascript` call from the moment it is made: the wait for a sandbox
   * worker, the worker's start, the code and its tool calls (default 5,000 ms).
   */
  readonly codeTimeoutMs?: number;
  /** CodeAct: memory of one `execute_javascript` call's sandbox, a hard cap (default 64 MiB, at least 16 MiB). */
  readonly codeMemoryLimitBytes?: number;
  /**
   * CodeAct: the most sandbox workers this agent's code runs in at once (a positive integer); the agent then has its
   * own pool, which `agent.close()` ends. Default: the pool shared by the process (`os.availableParallelism()`
   * workers). Calls beyond the bound wait, their deadline running.
   */
  readonly codeMaxWorkers?: number;
  /** CodeAct: a pool from `createCodeSandboxPool` to share one bound between agents (yours to close); not with `codeMaxWorkers`. */
  readonly codeSandboxPool?: CodeSandboxPool;
  /**
   * The most calls of one answer that run at once (default 1: one after the other; `true`: all). Whatever the limit,
   * each call's facts and result are recorded as one batch in the model's call order, so the log is the same.
   */
  readonly parallelToolCalls?: boolean | number;
  /**
   * Working-memory blocks the agent keeps notes in with the `working_memory` tool (added to its tools). Every prompt
   * carries them as one pinned system item after the summary; each edit is a `memory.noted` event.
   */
  readonly workingMemory?: WorkingMemoryOptions;
}

// Every option has a schema entry: adding an option without one does not compile.
void (AgentOptionsSchema.shape satisfies Record<keyof AgentOptions, z.ZodType>);

export type { PendingApproval } from './run-tools.js';

export interface RunResult {
  /** `finished`: the model answered without a call; `interrupted`: calls wait for `approve` / `reject`, then `run()` continues. */
  readonly status: 'finished' | 'interrupted';
  /** The calls that wait for a decision (empty when finished). */
  readonly pendingApprovals: readonly PendingApproval[];
  readonly runId: string;
  readonly outputText: string;
  /** Steps this call of `run` took. */
  readonly steps: number;
  /** The items this call of `run` added after the input (model output, tool results) that are still in memory. */
  readonly items: readonly MemoryItem[];
}

export interface RunOptions {
  readonly signal?: AbortSignal;
  /** Streams the model's answers when the client has `stream`: each text, reasoning and call-arguments delta as it arrives. */
  readonly onDelta?: DeltaListener;
}

/** Who decided and why, recorded in `approval.recorded`. */
export interface ApprovalOptions {
  readonly by?: string;
  readonly reason?: string;
}

const pendingOf = (approval: RunApproval): PendingApproval => ({ callId: approval.callId, name: approval.name, arguments: approval.arguments, step: approval.step });

/** The `action` an approval records: the tool and its arguments, cut to a readable length. */
const actionOf = (approval: RunApproval): string => {
  const text = `${approval.name} ${approval.arguments}`;
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
};

/** A session an agent runs in: `run(input)` for a new request, `run()` to continue an interrupted run. */
export class AgentRunSession {
  #running = false;
  /** The last decision (`approve` / `reject`) in progress; the next waits for it. */
  #decisions: Promise<unknown> = Promise.resolve();
  /** What the step stages use: the agent, the session and the last prompt recorded in full. */
  readonly #steps: StepSession;

  /**
   * Where its runs stand (the last step, the open run, its plan and approvals) is read from the session's fold, never
   * counted here: `session.state().run`. The last two parameters are ignored (kept for callers that pass them).
   */
  constructor(
    readonly agent: Agent,
    readonly session: AgentSession,
    _lastStep?: number,
    _openRun?: { runId: string; hasPlan: boolean },
  ) {
    this.#steps = { agent, session, lastPrompt: undefined };
  }

  /** The run part of the session's fold (the step's deferred bookkeeping events included). */
  get #runState(): RunState {
    return this.session.state().run;
  }

  get id(): string {
    return this.session.id;
  }

  get memory(): AgentSession['memory'] {
    return this.session.memory;
  }

  /** The last step number of this session (steps keep counting across runs and resumes). */
  get lastStep(): number {
    return this.#runState.lastStep;
  }

  /** The id of a run that started and has not finished or failed (after a crash or interruption). */
  get interruptedRunId(): string | undefined {
    return this.#runState.openRun?.runId;
  }

  /** The calls of the interrupted run that wait for a decision, in the model's call order (from the session's fold, so they survive a restart). */
  pendingApprovals(): readonly PendingApproval[] {
    return pendingApprovalsOf(this.session.state().run).map(pendingOf);
  }

  /**
   * Stops the session's background work (the counting of the agent's `countTokensOnWrite`): `session.close()`. The
   * session stays usable; the log stays open.
   * @example try { await session.run('go') } finally { await session.close() }
   */
  close(): Promise<void> {
    return this.session.close();
  }

  /**
   * Approves a pending call (`approval.recorded` with `callId`); once every pending call is decided, `run()` continues.
   * Throws `ApprovalNotPendingError` (unknown or decided call) or `ApprovalConflictError` (another writer was first); then nothing is recorded.
   * @example await session.approve(pending[0].callId, { by: 'ana', reason: 'looked at the diff' })
   */
  approve(callId: string, options: ApprovalOptions = {}): Promise<void> {
    return this.#decide(callId, true, options);
  }

  /** Rejects a pending call: on `run()` it gets the error result `Rejected: <reason>` instead of running. Errors as {@link approve}. */
  reject(callId: string, options: ApprovalOptions = {}): Promise<void> {
    return this.#decide(callId, false, options);
  }

  /**
   * One decision at a time on this session object: each reads the fold after the one before it was recorded, so of an
   * approve and a reject of the same call made together exactly one is recorded and the other is refused.
   */
  #decide(callId: string, approved: boolean, options: ApprovalOptions): Promise<void> {
    const decision = this.#decisions.then(() => this.#decideNow(callId, approved, options));
    this.#decisions = decision.catch(() => undefined);
    return decision;
  }

  async #decideNow(callId: string, approved: boolean, options: ApprovalOptions): Promise<void> {
    const what = approved ? 'approve' : 'reject';
    parseOptions(ApprovalOptionsSchema, options, what);
    if (typeof callId !== 'string' || callId === '') {
      throw new ApprovalNotPendingError(this.id, String(callId), 'unknown', `${what}: expected a call id (a non-empty string), got ${JSON.stringify(callId) ?? String(callId)}`);
    }
    const approval = this.session.state().run.openRun?.approvals?.find((a) => a.callId === callId);
    if (!approval) {
      throw new ApprovalNotPendingError(this.id, callId, 'unknown', `${what}: session ${this.id} has no call ${JSON.stringify(callId)} waiting for approval`);
    }
    if (approval.decision) {
      const by = approval.decision.by !== undefined ? ` by ${approval.decision.by}` : '';
      throw new ApprovalNotPendingError(
        this.id,
        callId,
        'decided',
        `${what}: call ${JSON.stringify(callId)} of session ${this.id} was already ${approval.decision.approved ? 'approved' : 'rejected'}${by} (seq ${approval.decision.seq})`,
      );
    }
    try {
      await this.session.record([
        {
          type: 'approval.recorded',
          action: actionOf(approval),
          approved,
          callId,
          ...(options.by !== undefined ? { by: options.by } : {}),
          ...(options.reason !== undefined ? { reason: options.reason } : {}),
        },
      ]);
    } catch (error) {
      if (ExpectedSeqConflictError.isInstance(error)) throw new ApprovalConflictError(this.id, callId, { cause: error });
      throw error;
    }
  }

  /**
   * Rewinds memory to what it was after `toSeq`, or at the start of step `toStep` (`session.rewound`; an interrupted
   * run is failed first). Not while a run is in progress. Steps keep counting.
   * @example await session.rewind({ toStep: 3 }, { reason: 'retry without the bad edit' })
   */
  async rewind(target: RewindTarget, options: RewindOptions = {}): Promise<SessionEventOf<'session.rewound'>> {
    if (this.#running) throw new SessionBusyError(this.id);
    this.#running = true;
    try {
      return await this.session.rewind(target, options);
    } finally {
      this.#running = false;
    }
  }

  /**
   * Compacts memory now with `policy` (default the agent's), with focus `instructions` for the policy; recorded as
   * `memory.compacted` with `reason: { kind: 'requested', instructions }` when instructions are given. Errors propagate.
   * @example await session.compact(undefined, { instructions: 'keep the failing test output' })
   */
  async compact(policy?: CompactPolicy, options: { readonly instructions?: string } = {}): Promise<CompactResult> {
    if (this.#running) throw new SessionBusyError(this.id);
    const chosen = policy ?? this.agent.options.compactPolicy;
    if (!chosen) throw new InvalidOptionsError('compact', [{ path: 'policy', message: 'is required (the agent has no compactPolicy)' }]);
    const recall = recallToolNameOf(this.agent.tools);
    return this.session.compact(chosen, { ...options, ...(recall !== undefined ? { recallTool: recall } : {}) });
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
    const approvals = session.state().run.openRun?.approvals ?? [];
    if (approvals.length > 0) {
      const undecided = approvals.filter((a) => a.decision === undefined).map((a) => a.callId);
      if (input !== undefined) {
        throw new ApprovalsPendingError(this.id, undecided, `run: session ${this.id} has a run waiting for approval of ${approvals.map((a) => a.callId).join(', ')}; decide them (approve / reject) and call run() without input first`);
      }
      if (undecided.length > 0) {
        throw new ApprovalsPendingError(this.id, undecided, `run: call(s) ${undecided.join(', ')} of session ${this.id} still wait for approve / reject`);
      }
    }
    const runId = input === undefined ? this.#continuedRunId() : await this.#startRun(input);
    const before = new Set(session.memory.state().entries.map((e) => e.id));
    let steps = 0;
    // The step in progress (the session's last step until this run starts one), named by a failure.
    let current = this.lastStep;
    const fail = async (reason: RunFailureReason, message: string, cause?: unknown): Promise<never> => {
      const why = `run ${reason === 'aborted' ? 'aborted' : reason === 'max-steps' ? 'stopped at maxSteps' : 'failed'}`;
      await answerUnansweredCalls(this.#steps, current, why).catch(() => undefined);
      await session.record([{ type: 'run.failed', runId, reason, message, step: current }]).catch(() => undefined);
      throw new AgentRunError(reason, message, runId, this.id, cause === undefined ? undefined : { cause });
    };

    let phase: RunPhase = firstPhase(agent.kind, this.#runState.openRun?.hasPlan ?? false);
    if (approvals.length > 0) {
      // The interrupted step's decided calls, in call order; only then does the model see the step's results.
      const tools = stepPlanFor(phase, { kind: agent.kind, systemPrompt: agent.options.systemPrompt, tools: agent.tools }).tools;
      const presetOf = (a: RunApproval): ToolOutcome | undefined => {
        if (a.decision?.approved !== true) return { output: `Rejected: ${a.decision?.reason ?? 'no reason given'}`, isError: true };
        // Started before and never answered: the process ended while it ran; the runtime never runs a call twice.
        if (a.started) return { output: 'Error: interrupted: the run ended while this approved call ran; it was not run again', isError: true };
        return undefined;
      };
      const planned: PlannedCall[] = approvals.map((a) => {
        const preset = presetOf(a);
        return { call: { callId: a.callId, name: a.name, arguments: a.arguments }, ...(preset ? { preset } : {}) };
      });
      const starting = approvals.filter((a) => presetOf(a) === undefined);
      try {
        if (starting.length > 0) {
          await session.record(starting.map((a) => ({ type: 'approval.call-started' as const, callId: a.callId, name: a.name, step: a.step, runId })));
        }
        await runPlannedCalls(this.#steps, { sessionId: this.id, runId, step: approvals[0]!.step }, new Map(tools.map((t) => [t.name, t])), planned, signal, agent.toolCallLimit);
      } catch (error) {
        if (signal.aborted) return fail('aborted', `run aborted: ${errorText(signal.reason)}`, error);
        return fail('error', errorText(error), error);
      }
    }
    for (;;) {
      if (signal.aborted) return fail('aborted', `run aborted: ${errorText(signal.reason)}`, signal.reason);
      if (steps >= agent.maxSteps) return fail('max-steps', `run stopped after maxSteps (${agent.maxSteps}) steps without a final answer`);
      steps += 1;
      const step = this.lastStep + 1;
      current = step;
      let outcome: StepOutcome;
      try {
        outcome = await executeStep(this.#steps, runId, step, stepPlanFor(phase, { kind: agent.kind, systemPrompt: agent.options.systemPrompt, tools: agent.tools }), signal, {
          onDelta: options.onDelta,
        });
      } catch (error) {
        if (signal.aborted) {
          const late = AbandonedWorkError.isInstance(error) ? ` (the run did not wait for ${error.what}: a late answer will be ignored)` : '';
          return fail('aborted', `run aborted: ${errorText(signal.reason)}${late}`, error);
        }
        if (ContextOverflowError.isInstance(error)) return fail('context-overflow', errorText(error), error);
        return fail('error', errorText(error), error);
      }
      if (phase === 'plan') {
        await session.record([{ type: 'plan.created', runId, step, plan: parsePlan(outcome.outputText), text: outcome.outputText }]);
      }
      if (outcome.pending !== undefined && outcome.pending.length > 0) {
        // Interrupted: the step's end is stored before the run returns (a deferred event never outlives run()).
        try {
          await flushDeferred(session.memory);
        } catch (error) {
          return fail('error', errorText(error), error);
        }
        // Interrupted: the run stays open, its approvals in the session's fold, until every one is decided and run() continues.
        const produced = session.memory.state().entries.filter((e) => !before.has(e.id));
        return { status: 'interrupted', pendingApprovals: this.pendingApprovals(), runId, outputText: outcome.outputText, steps, items: produced.map((e) => e.item) };
      }
      const next = phaseAfter(phase, outcome.toolCalls);
      if (next !== 'finished') {
        phase = next;
        continue;
      }
      await session.record([{ type: 'run.finished', runId, steps, outputText: outcome.outputText }]);
      const produced = session.memory.state().entries.filter((e) => !before.has(e.id));
      return { status: 'finished', pendingApprovals: [], runId, outputText: outcome.outputText, steps, items: produced.map((e) => e.item) };
    }
  }

  /** The interrupted run that `run()` continues. */
  #continuedRunId(): string {
    const open = this.#runState.openRun;
    if (!open) throw new NothingToContinueError(this.id);
    return open.runId;
  }

  /** Validates the input first; then the superseded run, the new run and its input are one atomic append. */
  async #startRun(input: string | MemoryItem | readonly MemoryItem[]): Promise<string> {
    const { agent } = this;
    const parsed = runInputItems(input);
    if ('problem' in parsed) throw new AgentRunError('invalid-input', `run: invalid input: ${parsed.problem}`, '', this.id);
    const opening: NewSessionEvent[] = [];
    const open = this.#runState.openRun;
    if (open) opening.push({ type: 'run.failed', runId: open.runId, reason: 'interrupted', message: 'superseded by a new run' });
    const runId = agent.ids();
    opening.push({ type: 'run.started', runId, runtime: agent.kind, settings: agent.recordedSettings() }, { type: 'user.input', items: parsed.items });
    try {
      await this.session.record(opening);
    } catch (error) {
      if (InvalidEventError.isInstance(error)) throw new AgentRunError('invalid-input', `run: invalid input: ${error.message}`, '', this.id, { cause: error });
      throw error;
    }
    return runId;
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
  tools: readonly Tool[];
  /** CodeAct: the user's tools, called from inside the code. */
  innerTools: readonly Tool[];
  /** The most calls of one answer that run at once (`parallelToolCalls`). */
  readonly toolCallLimit: number;
  /** The pool this agent made for `codeMaxWorkers` (ended by `close()`). */
  readonly #ownPool: CodeSandboxPool | undefined;

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
    if (options.codeMaxWorkers !== undefined) parseMaxWorkers(options.codeMaxWorkers, 'codeMaxWorkers');
    if (options.codeSandboxPool !== undefined) {
      if (options.codeMaxWorkers !== undefined) throw new InvalidCodeActOptionError('codeSandboxPool', 'give codeMaxWorkers or codeSandboxPool, not both');
      workerPoolOf(options.codeSandboxPool, 'codeSandboxPool');
    }
    this.#ownPool = kind === 'codeAct' && options.codeMaxWorkers !== undefined ? createCodeSandboxPool({ maxWorkers: options.codeMaxWorkers }) : undefined;
    const pool = this.#ownPool ?? options.codeSandboxPool;
    this.log = options.log ?? createMemoryLog();
    this.projector = options.contextProjector ?? new DefaultContextProjector();
    this.budget = parseContextBudget(options.contextBudget ?? {});
    this.maxSteps = options.maxSteps ?? 50;
    this.ids = options.ids ?? randomUUID;
    this.toolCallLimit = callLimitOf(options.parallelToolCalls);
    if (options.countTokensOnWrite === true && this.#projectorTokenizer() === undefined) {
      throw new InvalidOptionsError(`Agents.${kind}`, [
        { path: 'countTokensOnWrite', message: 'needs a contextProjector with a tokenizer (the built-in projectors have one): the tokenizer its projections count with' },
      ]);
    }
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
          ...(pool !== undefined ? { pool } : {}),
        }),
      ];
    } else {
      this.innerTools = userTools;
      this.tools = userTools;
    }
    if (options.workingMemory) {
      parseOptions(WorkingMemoryOptionsSchema, options.workingMemory, `Agents.${kind} workingMemory`);
      if (names.has(WORKING_MEMORY_TOOL)) throw new DuplicateToolError(WORKING_MEMORY_TOOL);
      const tool = workingMemoryTool(options.workingMemory);
      // CodeAct calls it from inside the code, like the user's tools.
      if (kind === 'codeAct') this.innerTools = [...this.innerTools, tool];
      else this.tools = [...this.tools, tool];
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

  /**
   * Ends the sandbox workers of the pool this agent made for `codeMaxWorkers` (code still running or waiting for a
   * worker ends with `code aborted: the sandbox pool was closed`) and resolves when they have exited. The log, a
   * `codeSandboxPool` you gave and the shared pool are left alone. Code run afterwards fails with
   * `CodeSandboxClosedError` as its result.
   * @example const agent = Agents.codeAct({ ...options, codeMaxWorkers: 2 }); try { await (await agent.newSession()).run('go') } finally { await agent.close() }
   */
  async close(): Promise<void> {
    await this.#ownPool?.close();
  }

  notify(notification: RuntimeNotification): void {
    try {
      this.options.onEvent?.(notification);
    } catch {
      // a listener must not break the run
    }
  }

  /**
   * Starts a new session in the agent's log, under `id` when given (one that already exists is refused: resume it).
   * @example const session = await agent.newSession({ id: 'ticket-4711' });
   */
  async newSession(options: { readonly id?: string } = {}): Promise<AgentRunSession> {
    const id = options.id;
    if (id === undefined) return this.#open(this.ids());
    if (typeof id !== 'string' || id.length === 0) throw new InvalidOptionsError('newSession', [{ path: 'id', message: `must be a non-empty string, got ${JSON.stringify(id)}` }]);
    if ((await this.log.head(id)) > 0) throw new InvalidOptionsError('newSession', [{ path: 'id', message: `session ${JSON.stringify(id)} already exists in the log; use resumeSession` }]);
    return this.#open(id);
  }

  /** Resumes a session from the log (memory, summary, last compaction, step count, an interrupted run). */
  async resumeSession(id: string): Promise<AgentRunSession> {
    if ((await this.log.head(id)) === 0) throw new UnknownSessionError(id);
    return this.#open(id);
  }

  /** The tokenizer of the projector, when it exposes one (the built-in projectors do). */
  #projectorTokenizer(): Tokenizer | undefined {
    return projectorTokenizer(this.projector, { named: false });
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
      ...(this.options.countTokensOnWrite === true ? { countTokensOnWrite: true } : {}),
      onEvents: (events) => {
        for (const event of events) this.notify({ type: 'EVENT', event });
      },
    });
    // Declared working-memory blocks that memory does not hold yet are noted now, outside any run (a re-run appends them as recorded).
    if (this.options.workingMemory) {
      const seeds = seedingEvents(this.options.workingMemory, session.memory.state());
      if (seeds.length > 0) await session.record(seeds);
    }
    return new AgentRunSession(this, session);
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
