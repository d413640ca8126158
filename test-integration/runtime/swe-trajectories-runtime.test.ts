// The runtime driven by 14 real mini-SWE-agent runs (../shared/data/swe-trajectories): a scripted model that
// answers with each run's recorded assistant messages, a `bash` tool that answers with the recorded outputs,
// an exact o200k token budget and automatic compaction; the laws hold at every step and nothing is lost.
// The pure converter round trip of the same data is in swe-trajectories.test.ts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { digestOf, isAgentRunError, type AgentRunError, type MemoryItem, type SessionEvent, type SessionEventOf } from '../../src/index.js';
import { fromChatCompletions, toChatCompletions } from '../../src/providers/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';
import { SWE_RUN_SETTINGS, contentText as text, playTrajectory, type Trajectory } from '../../test/support/swe-trajectory.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dataDir = path.resolve(repoRoot, '../shared/data/swe-trajectories');
const exists = existsSync(dataDir);
const files = exists ? readdirSync(dataDir).filter((name) => name.endsWith('.traj.json')).sort() : [];

if (!exists) {
  console.warn(`swe-trajectories-runtime: ${dataDir} is absent, so the runtime replays of the real runs are skipped.`);
}

const { budget: BUDGET, keep: KEEP, compactAbove: COMPACT_ABOVE } = SWE_RUN_SETTINGS;

type Json = Record<string, unknown>;
const ofType = <T extends SessionEvent['type']>(events: readonly SessionEvent[], type: T): SessionEventOf<T>[] =>
  events.filter((e): e is SessionEventOf<T> => e.type === type);
const callIdsIn = (items: readonly MemoryItem[]): string[] =>
  items.flatMap((item) => {
    const record = item as Json;
    if (item.type === 'function_call') return [String(record['call_id'])];
    const calls = record['tool_calls'];
    return Array.isArray(calls) ? calls.map((c: { id: string }) => c.id) : [];
  });
const outputIdsIn = (items: readonly MemoryItem[]): string[] =>
  items.filter((i) => i.type === 'function_call_output').map((i) => String((i as Json)['call_id']));

const STEP_ORDER = ['step.started', 'memory.compacted', 'context.projected', 'model.requested', 'model.responded', 'tool.result', 'step.ended'];

/** The runtime events of each step, in the order they were recorded (facts and hook events left out). */
const stepSequences = (events: readonly SessionEvent[]): string[][] => {
  const steps: string[][] = [];
  for (const event of events) {
    if (event.type === 'step.started') steps.push([]);
    if (steps.length > 0 && STEP_ORDER.includes(event.type)) steps.at(-1)!.push(event.type);
  }
  return steps;
};

/** Everything that entered memory, in order, as the events brought it in (compaction removes, never adds, here). */
const itemsThatEntered = (events: readonly SessionEvent[]): MemoryItem[] =>
  events.flatMap((e): MemoryItem[] => {
    if (e.type === 'user.input' || e.type === 'model.responded') return [...e.items];
    if (e.type === 'tool.result' && e.parentCallId === undefined) return [{ type: 'function_call_output', call_id: e.callId, output: e.output }];
    return [];
  });

describe.skipIf(!exists)('the runtime driven by real mini-SWE-agent runs', () => {
  const timings: string[] = [];

  describe.each(files)('%s', (file) => {
    const trajectory = JSON.parse(readFileSync(path.join(dataDir, file), 'utf8')) as Trajectory;
    const { messages, info } = trajectory;
    const body = messages.slice(2, -1);
    const assistants = body.filter((m) => m.role === 'assistant');
    const submitted = info.exit_status === 'Submitted';

    it('imports message by message exactly as the whole transcript imports (up to reasoning ids)', () => {
      const withoutReasoningIds = (items: readonly MemoryItem[]): unknown[] =>
        items.map((item) => (item.type === 'reasoning' ? { ...item, id: '' } : item));
      const perMessage = messages.flatMap((m) => fromChatCompletions([m]));
      expect(withoutReasoningIds(perMessage)).toStrictEqual(withoutReasoningIds(fromChatCompletions(messages)));
    });

    it('replays through the runtime with a budget and compaction: laws hold at every step, nothing is lost', async () => {
      const started = performance.now();
      const { events, model, result, failure, runs, executed } = await playTrajectory(trajectory);

      // How the run ended: the recorded submission as the final answer, or the recorded model error.
      const steps = ofType(events, 'step.started').map((e) => e.step);
      if (submitted) {
        expect(failure).toBeUndefined();
        expect(result?.outputText).toBe(info.submission);
        expect(model.remaining).toBe(0);
        expect(steps).toEqual(Array.from({ length: assistants.length + 1 }, (_, i) => i + 1));
        expect(ofType(events, 'run.finished')).toHaveLength(1);
      } else {
        expect(isAgentRunError(failure)).toBe(true);
        expect((failure as AgentRunError).reason).toBe('error');
        expect((failure as AgentRunError).message).toBe(messages.at(-1)!.content);
        expect(ofType(events, 'run.failed').at(-1)).toMatchObject({ reason: 'error', step: assistants.length + 1 });
      }
      const interjected = body.filter((m) => m.role === 'user').length;
      expect(runs).toBe(1 + interjected);
      expect(ofType(events, 'run.failed').filter((e) => e.reason === 'aborted')).toHaveLength(interjected);

      // Each step in the loop's order: (compaction) → projection → request → response → results → end.
      const sequences = stepSequences(events);
      sequences.forEach((sequence, i) => {
        const failedAtModel = !submitted && i === sequences.length - 1;
        const compacted = sequence.filter((t) => t === 'memory.compacted');
        const results = sequence.filter((t) => t === 'tool.result');
        expect(compacted.length).toBeLessThanOrEqual(1);
        expect(sequence, `events of step ${i + 1}`).toEqual([
          'step.started',
          ...compacted,
          'context.projected',
          'model.requested',
          ...(failedAtModel ? [] : ['model.responded', ...results, 'step.ended']),
        ]);
      });
      expect(ofType(events, 'memory.compacted').every((c) => c.step !== undefined)).toBe(true);

      // The laws, replayed at every seq of the session (coverage, answered calls, recorded projection, fold).
      expect(checkSessionLaws(events)).toEqual([]);

      // Each request: the recorded system prompt, exactly the step's recorded projection, calls paired, within budget.
      const projected = ofType(events, 'context.projected');
      expect(model.requests).toHaveLength(projected.length);
      const outputs = new Map(body.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id!, text(m.content)]));
      model.requests.forEach((request, i) => {
        const recorded = projected[i]!;
        expect(request.systemPrompt).toBe(messages[0]!.content);
        expect(request.tools?.map((t) => t.name)).toEqual(['bash']);
        expect(digestOf(request.items)).toBe(recorded.digest);
        expect([...outputIdsIn(request.items)].sort()).toEqual([...callIdsIn(request.items)].sort());
        const report = recorded.report;
        expect(report.projectedTokens! <= BUDGET.maxTokens || report.projectedItemCount <= 2, `tokens sent at step ${i + 1}`).toBe(true);
        // The newest item is what the model needs next: the recorded output of its last call (or the user's words).
        const newest = request.items.at(-1) as Json;
        if (newest['type'] === 'function_call_output') expect(newest['output']).toBe(outputs.get(String(newest['call_id'])) ?? info.submission);
        else expect(newest).toMatchObject({ type: 'message', role: 'user' });
      });

      // The tool ran exactly the recorded commands, in order, once each.
      const recordedCalls = assistants.flatMap((m) => m.tool_calls ?? []);
      expect(executed).toEqual(recordedCalls.map((c) => ({ callId: c.id, command: (JSON.parse(c.function!.arguments) as { command: string }).command })));
      expect(ofType(events, 'tool.result').every((r) => !r.isError)).toBe(true);

      // What entered memory, exported back to Chat Completions, is the recorded conversation: the system
      // message went as the system prompt, tool messages lose mini-SWE-agent's `extra`, and the run ends
      // with the submit call's output and the final answer instead of the `exit` message.
      const expected: unknown[] = [
        messages[1],
        ...body.map((m) => (m.role === 'tool' ? { role: 'tool', tool_call_id: m.tool_call_id, content: m.content } : m)),
      ];
      if (submitted) {
        const submitCall = recordedCalls.at(-1)!;
        expected.push({ role: 'tool', tool_call_id: submitCall.id, content: info.submission }, { role: 'assistant', content: info.submission });
      }
      const entered = itemsThatEntered(events);
      expect(toChatCompletions(entered)).toStrictEqual(expected);

      // Compaction ran at the top of steps, a bounded number of times, without failing.
      const compactions = ofType(events, 'memory.compacted');
      expect(ofType(events, 'compaction.failed')).toEqual([]);
      if (entered.length > COMPACT_ABOVE + 10) expect(compactions.length).toBeGreaterThan(0);
      expect(compactions.length).toBeLessThanOrEqual(Math.ceil(entered.length / (COMPACT_ABOVE - KEEP)) + 1);
      for (const c of compactions) expect(c.keptIds.length + c.droppedIds.length).toBeGreaterThan(COMPACT_ABOVE);
      if (compactions.length > 0) expect(compactions.some((c) => c.result.failedCommands.length > 0) || !events.some((e) => e.type === 'command.failed')).toBe(true);

      timings.push(`${file}: ${steps.length} steps, ${events.length} events, ${compactions.length} compactions, ${Math.round(performance.now() - started)} ms`);
    });
  });

  afterAll(() => {
    if (timings.length > 0) console.info(`swe-trajectories-runtime (exact o200k_base token budget):\n  ${timings.join('\n  ')}`);
  });
});
