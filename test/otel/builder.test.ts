// The span builder on hand-written event sequences: nested (CodeAct) calls, a run continued without run.started, a
// compaction outside a run, spans left open at the end, and bad timestamps.
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/events/index.js';
import { functionCall } from '../../src/items/index.js';
import { SessionSpanBuilder, type SpanEnd, type SpanStart } from '../../src/otel/spans.js';

let seq = 0;
const ev = (type: string, payload: Record<string, unknown> = {}, at?: string): SessionEvent =>
  ({ sessionId: 's', seq: ++seq, at: at ?? new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(), v: 1, prevHash: '', hash: '', type, ...payload }) as unknown as SessionEvent;

const build = (events: readonly SessionEvent[]) => {
  const starts: SpanStart[] = [];
  const ends: SpanEnd[] = [];
  const builder = new SessionSpanBuilder({ start: (s) => starts.push(s), end: (e) => ends.push(e) });
  for (const e of events) builder.add(e);
  return { starts, ends, builder, byName: (name: string) => starts.filter((s) => s.name === name) };
};

const policy = { name: 'P', settings: {} };
const report = { sourceItemCount: 1, projectedItemCount: 1, droppedItemCount: 0, sourceApproxChars: 1, projectedApproxChars: 1, itemLimitApplied: false, characterLimitApplied: false, notes: [] };

describe('SessionSpanBuilder', () => {
  it('a CodeAct call with nested calls: the outer span opens with the first nested one, nested spans are its children', () => {
    seq = 0;
    const { starts, ends, byName } = build([
      ev('run.started', { runId: 'r' }),
      ev('step.started', { runId: 'r', step: 1 }),
      ev('context.projected', { step: 1, runId: 'r', projector: policy, budget: {}, report, fateRuns: 'kept:tail', digest: 'd' }),
      ev('model.requested', { step: 1, runId: 'r', model: 'claude-x', itemCount: 1, digest: 'd', tools: [] }),
      ev('model.responded', { step: 1, runId: 'r', items: [functionCall('js1', 'execute_javascript', { code: '…' })], durationMs: 250 }),
      ev('tool.result', { callId: 'js1.1', parentCallId: 'js1', name: 'read', output: 'a', isError: false, step: 1 }),
      ev('tool.result', { callId: 'js1.2', parentCallId: 'js1', name: 'read', output: 'Error: no', isError: true, step: 1 }),
      ev('tool.result', { callId: 'js1', output: 'done', isError: false, name: 'execute_javascript', step: 1 }),
      ev('step.ended', { runId: 'r', step: 1, toolCalls: 1 }),
      ev('run.finished', { runId: 'r', steps: 1 }),
    ]);
    const outer = byName('execute_tool execute_javascript');
    expect(outer).toHaveLength(1);
    expect(outer[0]!.part).toBe('outer');
    expect(outer[0]!.parentKey).toBe(byName('step')[0]!.key);
    const nested = byName('execute_tool read');
    expect(nested.map((n) => n.parentKey)).toEqual([outer[0]!.key, outer[0]!.key]);
    expect(new Set(starts.map((s) => s.key)).size).toBe(starts.length);
    expect(ends.find((e) => e.key === nested[1]!.key)?.error).toEqual({ type: 'tool_error', message: 'Error: no' });
    // Every span started is ended, children before parents.
    expect(ends.map((e) => e.key).sort()).toEqual(starts.map((s) => s.key).sort());
    expect(ends.findIndex((e) => e.key === outer[0]!.key)).toBeGreaterThan(ends.findIndex((e) => e.key === nested[1]!.key));
    const chat = byName('chat claude-x')[0]!;
    expect(chat.attributes['gen_ai.provider.name']).toBe('anthropic');
    expect(ends.find((e) => e.key === chat.key)?.endMs).toBe(chat.startMs + 250);
  });

  it('a run continued without its run.started opens its span at the first step; a compaction outside a run is its own trace', () => {
    seq = 10;
    const { starts, ends, byName, builder } = build([
      ev('step.started', { runId: 'r', step: 7 }),
      ev('model.requested', { step: 7, runId: 'r', model: 'm', itemCount: 0, digest: 'd', tools: [] }),
      ev('run.failed', { runId: 'r', reason: 'aborted', message: 'stopped', step: 7 }),
      ev('memory.compacted', { trigger: 'manual', policy, layout: [], keptIds: [], droppedIds: ['1:0'], summary: null, result: {} }),
      ev('run.started', { runId: 'r2' }),
      ev('step.started', { runId: 'r2', step: 8 }),
    ]);
    const runs = byName('invoke_agent');
    expect(runs).toHaveLength(2);
    expect(runs[0]!.attributes['context_ledger.incomplete']).toBe(true);
    expect(runs[0]!.traceSeq).toBe(11);
    expect(ends.find((e) => e.key === runs[0]!.key)?.error).toEqual({ type: 'aborted', message: 'stopped' });
    expect(ends.find((e) => e.key === byName('chat m')[0]!.key)?.error?.type).toBe('aborted');
    const compact = byName('compact')[0]!;
    expect(compact.parentKey).toBeUndefined();
    expect(compact.traceSeq).toBe(compact.seq);
    // The second run is still open at the end; endOpen closes it (and its step), marked incomplete.
    expect(builder.openSpans().size).toBe(2);
    builder.endOpen('s');
    expect(builder.openSpans().size).toBe(0);
    expect(ends.slice(-2).map((e) => e.attributes['context_ledger.incomplete'])).toEqual([true, true]);
    expect(starts.filter((s) => s.name === 'step').map((s) => s.parentKey)).toEqual([runs[0]!.key, runs[1]!.key]);
  });

  it('an unparsable time takes the previous event\'s; events outside a run make no spans', () => {
    seq = 20;
    const { starts } = build([
      ev('user.input', { items: [] }),
      ev('tool.result', { callId: 'x', output: 'o', isError: false }),
      ev('run.started', { runId: 'r' }, 'not a time'),
    ]);
    expect(starts).toHaveLength(1);
    expect(starts[0]!.startMs).toBe(Date.UTC(2026, 0, 1, 0, 0, 22));
  });
});
