// The Agents SDK runner persisting through LedgerSession's history transactions: an output guardrail that trips after a
// tool with side effects ran. Ported from openai/openai-agents-js, packages/agents-core/test/run.approvalGuardrailSession.test.ts
// at tag v0.14.3 (commit 7c4ab68e55c477f6f2997d6fc7a811f3d92de89b, the installed @openai/agents 0.14.3): the case "persists
// a direct final tool once for $behaviorName in $mode mode when guardrails trip", its model stub and helpers, with the SDK's
// MemorySession replaced by LedgerSession (with and without its callModelInputFilter), and the recorded session checked.
import { Agent, OutputGuardrailTripwireTriggered, Usage, isSessionHistoryTransactionAwareSession, run, setTracingDisabled, tool, type AgentInputItem, type Model, type ModelRequest, type ModelResponse, type StreamEvent, type ToolUseBehavior } from '@openai/agents';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { openLedgerSession } from '../../src/bridges/openai-agents/index.js';
import { openMemoryLog, replaySession, type SessionEvent } from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

type RunMode = 'non_streamed' | 'streamed';

/** The SDK test's `fakeModelMessage` (test/stubs.ts). */
const fakeModelMessage = (text: string) => ({
  id: '123',
  status: 'completed' as const,
  type: 'message' as const,
  role: 'assistant' as const,
  content: [{ type: 'output_text' as const, text, providerData: { annotations: [] } }],
});

class ApprovalSessionModel implements Model {
  readonly requests: ModelRequest[] = [];

  constructor(private readonly responses: ModelResponse[]) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const response = this.responses.shift();
    if (!response) {
      throw new Error('No response found.');
    }
    return response;
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const response = await this.getResponse(request);
    yield {
      type: 'response_done',
      response: {
        id: response.responseId ?? 'stream-response',
        output: response.output,
        usage: response.usage,
      },
    } as StreamEvent;
  }
}

function functionToolCall(name: string, callId: string, argumentsValue = '{}') {
  return {
    type: 'function_call' as const,
    id: `${callId}-item`,
    callId,
    name,
    status: 'completed' as const,
    arguments: argumentsValue,
    providerData: {},
  };
}

function getPersistedToolItems(items: AgentInputItem[]) {
  return items.filter((item) => item.type === 'function_call' || item.type === 'function_call_result');
}

const finalToolBehaviors: Array<{ name: string; value: ToolUseBehavior }> = [
  { name: 'stop_on_first_tool', value: 'stop_on_first_tool' },
  { name: 'stopAtToolNames', value: { stopAtToolNames: ['commit_tool'] } },
  {
    name: 'custom finalizer',
    value: async (_context, results) => {
      const result = results.find((item) => item.type === 'function_output');
      return { isFinalOutput: true, isInterrupted: undefined, finalOutput: String(result?.output) };
    },
  },
];

const readAll = async (log: { read(id: string): AsyncIterable<SessionEvent> }, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

// The runner persists a committed tool output through a session's history transactions from 0.14.x on (these cases are
// 0.14.3's); the SDK matrix runs this file from 0.14.0, whose runner has no such path: the cases are then left out.
describe('LedgerSession and the runner of any supported SDK version', () => {
  it('offers the history transaction the runner persists a committed tool output with (0.14.x on)', async () => {
    const session = await openLedgerSession(await openMemoryLog(), { sessionId: 'capabilities' });
    expect(typeof session.applyHistoryTransaction).toBe('function');
    if (typeof isSessionHistoryTransactionAwareSession === 'function') expect(isSessionHistoryTransactionAwareSession(session)).toBe(true);
  });
});

if (typeof isSessionHistoryTransactionAwareSession === 'function') {
  describe('committed tool output guardrail session persistence, through LedgerSession', () => {
    beforeAll(() => {
      setTracingDisabled(true);
    });

    it.each(
      finalToolBehaviors.flatMap(({ name, value }) =>
        (['non_streamed', 'streamed'] as const).flatMap((mode) =>
          [false, true].map((filter) => ({ behaviorName: name, toolUseBehavior: value, mode, filter })),
        ),
      ),
    )('persists a direct final tool once for $behaviorName in $mode mode when guardrails trip (callModelInputFilter: $filter)', async ({ toolUseBehavior, mode, filter }) => {
      const execute = vi.fn(async () => 'committed-result');
      let guardrailShouldTrip = true;
      const commitTool = tool({ name: 'commit_tool', description: 'Commits a side effect.', parameters: z.object({}), execute });
      const model = new ApprovalSessionModel([
        { output: [functionToolCall('commit_tool', 'call-committed')], usage: new Usage() },
        { output: [fakeModelMessage('done')], usage: new Usage() },
      ]);
      const agent = new Agent({
        name: 'Committed tool agent',
        model,
        tools: [commitTool],
        toolUseBehavior,
        outputGuardrails: [{ name: 'block committed result', execute: async () => ({ outputInfo: null, tripwireTriggered: guardrailShouldTrip }) }],
      });
      const log = await openMemoryLog();
      const session = await openLedgerSession(log, { sessionId: 'guarded' });
      const transactions = vi.spyOn(session, 'applyHistoryTransaction');
      const options = { session, ...(filter ? { callModelInputFilter: session.callModelInputFilter } : {}) };

      const runOnce = async (input: string) => {
        if (mode === 'streamed') {
          const result = await run(agent, input, { ...options, stream: true });
          await result.completed;
          return result;
        }
        return await run(agent, input, options);
      };

      await expect(runOnce('Use commit_tool')).rejects.toBeInstanceOf(OutputGuardrailTripwireTriggered);
      expect(execute).toHaveBeenCalledTimes(1);
      expect((await session.getItems()).map((item) => (item.type === 'message' ? `${item.type}:${item.role}` : item.type))).toEqual([
        'message:user',
        'function_call',
        'function_call_result',
      ]);
      // the runner persisted the blocked turn through the session's transaction
      expect(transactions).toHaveBeenCalled();

      guardrailShouldTrip = false;
      const followup = await runOnce('Continue');
      expect(followup.finalOutput).toBe('done');
      expect(execute).toHaveBeenCalledTimes(1);
      expect(getPersistedToolItems(model.requests.at(-1)?.input as AgentInputItem[])).toMatchObject([
        { type: 'function_call', callId: 'call-committed' },
        { type: 'function_call_result', callId: 'call-committed' },
      ]);
      expect(getPersistedToolItems(await session.getItems())).toHaveLength(2);

      const events = await readAll(log, 'guarded');
      expect(events.filter((e) => e.type === 'memory.edited').length).toBeGreaterThan(0);
      expect(checkSessionLaws(events)).toEqual([]);
      expect((await replaySession(log, 'guarded', { mode: 'project' })).identical).toBe(true);
      await log.close();
    });
  });
}
