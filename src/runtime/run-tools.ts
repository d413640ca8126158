// The "run tools" stage of a step: each call of the answer in order, with its hooks, its recorded result, and nested calls (CodeAct).
import { errorText } from '../events/index.js';
import { toolCallsOf } from '../items/index.js';
import { isAbandonedWorkError, untilAborted } from '../model/index.js';
import { outcomeUnlessAbandoned } from './abandon.js';
import type { NestedToolCaller } from './codeact.js';
import { CallAbandonedError, ToolFailedError } from './errors.js';
import type { TurnContext } from './hooks.js';
import { recordEvents, runHook, type StepAnswer, type StepSession } from './step-session.js';
import { runTool, type FactEvent, type Tool, type ToolContext } from './tools.js';
import { MEMORY_ACCESS, type MemoryToolAccess } from './memory-tools/access.js';

/** A tool's context in a step: records facts and makes nested calls until `close()` (its call ended). */
type StepToolContext = ToolContext & { callTool: NestedToolCaller; close(): void; [MEMORY_ACCESS]: MemoryToolAccess };

/**
 * The context of call `callId`: `record` appends a fact; `callTool` runs one of the agent's inner tools as a nested
 * call (`<callId>.<n>`, its own `tool.result` with `parentCallId`). Both refuse once the call has ended.
 */
const toolContextFor = (s: StepSession, turn: TurnContext, callId: string, signal: AbortSignal): StepToolContext => {
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
      await recordEvents(s, [fact]);
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
      const running = runTool(tool, name, JSON.stringify(args ?? {}), { ...context, callId: nestedId, signal: callSignal, record });
      const outcome = await outcomeUnlessAbandoned(running, options?.signal);
      ensureOpen(`the result of tools.${name}()`);
      await recordEvents(s, [
        { type: 'tool.result', callId: nestedId, parentCallId: callId, name, output: outcome.output, isError: outcome.isError, step: turn.step },
      ]);
      if (outcome.isError) throw new ToolFailedError(name, outcome.output.replace(/^Error: /, ''));
      return outcome.output;
    },
  };
  return context;
};

/**
 * Runs the answer's calls one at a time (a call the answer rejected gets its error as result), each between
 * `beforeToolCall` and `afterToolCall`; stops at an abort (the rest are answered later). Returns how many calls the answer made.
 */
export const runToolCalls = async (
  s: StepSession,
  turn: TurnContext,
  tools: readonly Tool[],
  { result, items }: StepAnswer,
  signal: AbortSignal,
): Promise<number> => {
  const calls = toolCallsOf(items);
  const byName = new Map(tools.map((t) => [t.name, t]));
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!;
    if (signal.aborted) break; // the rest get "not executed" results from the caller
    await runHook(s, 'beforeToolCall', { ...turn, call });
    const rejection = result.rejected.get(call.callId);
    let outcome: { output: string; isError: boolean };
    if (rejection !== undefined) {
      outcome = { output: rejection, isError: true };
    } else {
      const context = toolContextFor(s, turn, call.callId, signal);
      try {
        // A tool that ignores the signal is not waited for; its late result and facts are never recorded.
        outcome = await untilAborted(runTool(byName.get(call.name), call.name, call.arguments, context), signal, `tool ${JSON.stringify(call.name)}`);
      } catch (error) {
        context.close();
        if (!isAbandonedWorkError(error)) throw error;
        await recordEvents(s, [{ type: 'tool.result', callId: call.callId, output: `Error: ${error.message}`, isError: true, name: call.name, step: turn.step }]);
        throw error;
      }
      context.close();
    }
    await recordEvents(s, [{ type: 'tool.result', callId: call.callId, output: outcome.output, isError: outcome.isError, name: call.name, step: turn.step }]);
    await runHook(s, 'afterToolCall', { ...turn, call, output: outcome.output, isError: outcome.isError });
  }
  return calls.length;
};
