// The "run tools" stage of a step: the answer's calls (up to `parallelToolCalls` at once), each recorded as one batch in call order, approvals asked first.
import { validateNewEvent, type NewSessionEvent } from '../events/index.js';
import { errorText } from '../base/index.js';
import { toolCallsOf, type ToolCallInfo } from '../items/index.js';
import { AbandonedWorkError, untilAborted } from '../model/index.js';
import { outcomeUnlessAbandoned } from './abandon.js';
import type { NestedToolCaller } from './codeact.js';
import { CallAbandonedError, ToolFailedError } from './errors.js';
import type { AgentHooks, TurnContext } from './hooks.js';
import { flushEvents, recordEvents, runHook, type StepAnswer, type StepSession } from './step-session.js';
import { approvalNeeded, runTool, type FactEvent, type Tool, type ToolContext, type ToolOutcome } from './tools.js';
import { MEMORY_ACCESS, type MemoryToolAccess } from './memory-tools/access.js';

/** A tool's context in a step: buffers facts and nested calls for its call's batch until `close()` (its call ended). */
type StepToolContext = ToolContext & { callTool: NestedToolCaller; close(): void; [MEMORY_ACCESS]: MemoryToolAccess };

/** A call waiting for a decision: what `approval.requested` recorded. */
export interface PendingApproval {
  readonly callId: string;
  readonly name: string;
  readonly arguments: string;
  readonly step: number;
}

/** What the stage did: how many calls the answer made, and those that now wait for approval (the run is then interrupted). */
export interface ToolCallsOutcome {
  readonly toolCalls: number;
  readonly pending: readonly PendingApproval[];
}

/** A call to run: its tool, or a result decided without running it (the answer rejected it, a person rejected it, its gate threw). */
export interface PlannedCall {
  readonly call: ToolCallInfo;
  readonly preset?: ToolOutcome;
}

/** How many calls of one answer may run at once: `true` = all, `false` or absent = one. */
export const callLimitOf = (parallelToolCalls: boolean | number | undefined): number =>
  parallelToolCalls === true ? Number.POSITIVE_INFINITY : typeof parallelToolCalls === 'number' ? parallelToolCalls : 1;

/** Runs a hook of one call; a throw becomes a `hook.failed` event in the call's batch instead of being appended at once. */
const runCallHook = async <K extends keyof AgentHooks>(
  s: StepSession,
  name: K,
  context: Parameters<NonNullable<AgentHooks[K]>>[0] & TurnContext,
  batch: NewSessionEvent[],
): Promise<void> => {
  const hook = s.agent.options.hooks?.[name] as ((c: unknown) => unknown) | undefined;
  if (!hook) return;
  await flushEvents(s);
  try {
    await hook.call(s.agent.options.hooks, context);
  } catch (error) {
    batch.push({ type: 'hook.failed', hook: name, error: errorText(error), step: context.step, runId: context.runId });
  }
};

/** Validates an event now (the tool sees a bad fact at once), for a batch appended later. */
const validated = (event: unknown): NewSessionEvent => {
  const checked = validateNewEvent(event);
  if (checked._tag === 'Left') throw checked.left;
  return checked.right;
};

/**
 * The context of call `callId`: `record` adds a fact to the call's batch; `callTool` runs one of the agent's inner
 * tools as a nested call (`<callId>.<n>`, its own `tool.result` with `parentCallId`, in the batch). Both refuse once the call has ended.
 */
const toolContextFor = (s: StepSession, turn: TurnContext, callId: string, signal: AbortSignal, batch: NewSessionEvent[]): StepToolContext => {
  let nested = 0;
  let open = true;
  const ensureOpen = (what: string): void => {
    if (!open) throw new CallAbandonedError(`${what} after call ${callId} ended (the run did not wait for it); not recorded`);
  };
  const context: StepToolContext = {
    close: () => {
      open = false;
    },
    sessionId: turn.sessionId,
    runId: turn.runId,
    step: turn.step,
    callId,
    signal,
    record: async (fact) => {
      ensureOpen(`context.record(${JSON.stringify(fact?.type)})`);
      batch.push(validated(fact));
    },
    [MEMORY_ACCESS]: {
      session: s.session,
      compactPolicy: s.agent.options.compactPolicy,
      record: async (events) => {
        ensureOpen(`recording ${events.map((e) => e.type).join(', ')}`);
        await recordEvents(s, events);
      },
    },
    callTool: async (name, args, options) => {
      ensureOpen(`tools.${name}()`);
      nested += 1;
      const nestedId = `${callId}.${nested}`;
      const tool = s.agent.innerTools.find((t) => t.name === name);
      // options.signal aborts when the outer call ends first (CodeAct's deadline): the call is abandoned.
      const callSignal = options?.signal ?? signal;
      const record = async (fact: FactEvent): Promise<void> => {
        if (options?.signal?.aborted) throw new CallAbandonedError(`not recorded: the call was abandoned (${errorText(options.signal.reason)})`);
        await context.record(fact);
      };
      // Code cannot pause for a person: a nested call to a tool that would ask fails without running.
      const gate = tool ? await approvalNeeded(tool, JSON.stringify(args ?? {}), { sessionId: turn.sessionId, runId: turn.runId, step: turn.step, callId: nestedId }) : { needed: false };
      const running: Promise<ToolOutcome> =
        gate.needed || gate.failed !== undefined
          ? Promise.resolve({ output: gate.failed ?? `Error: ${name} needs approval, which a call from inside code cannot wait for`, isError: true })
          : runTool(tool, name, JSON.stringify(args ?? {}), { ...context, callId: nestedId, signal: callSignal, record });
      const outcome = await outcomeUnlessAbandoned(running, options?.signal);
      ensureOpen(`the result of tools.${name}()`);
      batch.push({ type: 'tool.result', callId: nestedId, parentCallId: callId, name, output: outcome.output, isError: outcome.isError, step: turn.step });
      if (outcome.isError) throw new ToolFailedError(name, outcome.output.replace(/^Error: /, ''));
      return outcome.output;
    },
  };
  return context;
};

/** One call's run: its batch (hook failures, facts, nested results, then its `tool.result`) and how it ended. */
interface CallRun {
  readonly batch: NewSessionEvent[];
  readonly outcome: ToolOutcome;
  /** The run was aborted while the call ran: recorded with its error result, then thrown. */
  readonly abandoned?: unknown;
}

/** Runs one call between `beforeToolCall` and its result; never throws (a failure is its outcome). */
const executeCall = async (
  s: StepSession,
  turn: TurnContext,
  byName: ReadonlyMap<string, Tool>,
  { call, preset }: PlannedCall,
  signal: AbortSignal,
): Promise<CallRun> => {
  const batch: NewSessionEvent[] = [];
  await runCallHook(s, 'beforeToolCall', { ...turn, call }, batch);
  let outcome: ToolOutcome;
  let abandoned: unknown;
  if (preset !== undefined) {
    outcome = preset;
  } else {
    const context = toolContextFor(s, turn, call.callId, signal, batch);
    try {
      // A tool that ignores the signal is not waited for; its late result and facts are never recorded.
      outcome = await untilAborted(runTool(byName.get(call.name), call.name, call.arguments, context), signal, `tool ${JSON.stringify(call.name)}`);
    } catch (error) {
      if (!AbandonedWorkError.isInstance(error)) outcome = { output: `Error: ${errorText(error)}`, isError: true };
      else {
        outcome = { output: `Error: ${error.message}`, isError: true };
        abandoned = error;
      }
    }
    context.close();
  }
  batch.push({ type: 'tool.result', callId: call.callId, output: outcome.output, isError: outcome.isError, name: call.name, step: turn.step });
  return { batch, outcome, ...(abandoned !== undefined ? { abandoned } : {}) };
};

/**
 * Runs `planned` with at most `limit` at once and records them in the given order: each call's batch is appended
 * once it and every earlier call have finished, then its `afterToolCall` runs, so the log does not depend on which
 * call finishes first. An abort ends every running call (each gets its error result) and starts no more (those get
 * "not executed" results from the run); the abort is then thrown. `afterToolCall` runs once for every call that ran
 * to an end (its tool returned or threw, or its result was decided without running it), also when a call before it
 * in call order was ended by the abort; a call the abort ended while it ran (its tool did not settle) gets no
 * `afterToolCall`, as a single call does not, and a call never started gets neither hook.
 * @example await runPlannedCalls(steps, turn, byName, calls.map((call) => ({ call })), signal, 4)
 */
export const runPlannedCalls = async (
  s: StepSession,
  turn: TurnContext,
  byName: ReadonlyMap<string, Tool>,
  planned: readonly PlannedCall[],
  signal: AbortSignal,
  limit: number,
): Promise<void> => {
  const runs: Array<Promise<CallRun | undefined>> = [];
  const settle: Array<(run: CallRun | undefined) => void> = [];
  for (let i = 0; i < planned.length; i++) runs.push(new Promise((resolve) => settle.push(resolve)));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < planned.length) {
      const i = next++;
      // Not started after an abort: the run answers it ("not executed").
      settle[i]!(signal.aborted ? undefined : await executeCall(s, turn, byName, planned[i]!, signal));
    }
  };
  const workers = Math.max(1, Math.min(limit, planned.length));
  for (let w = 0; w < workers; w++) void worker();
  // The first call the abort ended while it ran: the stage ends with it once every started call is recorded (the
  // calls never started get "not executed" from the run).
  let abandoned: { readonly error: unknown } | undefined;
  for (let i = 0; i < planned.length; i++) {
    const run = await runs[i]!;
    if (run === undefined) break;
    await recordEvents(s, run.batch);
    if (run.abandoned !== undefined) {
      abandoned ??= { error: run.abandoned };
      continue;
    }
    const { call } = planned[i]!;
    await runHook(s, 'afterToolCall', { ...turn, call, output: run.outcome.output, isError: run.outcome.isError });
  }
  if (abandoned !== undefined) throw abandoned.error;
};

/**
 * The answer's calls: a call whose tool asks for approval gets `approval.requested` (all of them first, in one batch) and
 * is left for a person; the others run (up to `limit` at once, a call the answer rejected gets its error as result),
 * each between `beforeToolCall` and `afterToolCall`, recorded in call order. Stops at an abort (the rest are answered later).
 */
export const runToolCalls = async (
  s: StepSession,
  turn: TurnContext,
  tools: readonly Tool[],
  { result, items }: StepAnswer,
  signal: AbortSignal,
  limit = 1,
): Promise<ToolCallsOutcome> => {
  const calls = toolCallsOf(items);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const planned: PlannedCall[] = [];
  const pending: PendingApproval[] = [];
  for (const call of calls) {
    const rejection = result.rejected.get(call.callId);
    if (rejection !== undefined) {
      planned.push({ call, preset: { output: rejection, isError: true } });
      continue;
    }
    const gate = await approvalNeeded(byName.get(call.name), call.arguments, { sessionId: turn.sessionId, runId: turn.runId, step: turn.step, callId: call.callId });
    if (gate.failed !== undefined) planned.push({ call, preset: { output: gate.failed, isError: true } });
    else if (gate.needed) pending.push({ callId: call.callId, name: call.name, arguments: call.arguments, step: turn.step });
    else planned.push({ call });
  }
  if (pending.length > 0 && !signal.aborted) {
    await recordEvents(
      s,
      pending.map((p) => ({ type: 'approval.requested' as const, callId: p.callId, name: p.name, arguments: p.arguments, step: p.step, runId: turn.runId })),
    );
  }
  await runPlannedCalls(s, turn, byName, planned, signal, limit);
  return { toolCalls: calls.length, pending };
};
