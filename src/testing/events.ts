// fast-check arbitraries for session events, for fold laws and model-based tests of memory.
import fc from 'fast-check';
import type { NewSessionEvent } from '../events/index.js';
import type { MemoryItem } from '../items/index.js';

const text = fc.string({ maxLength: 40 });
const callId = fc.constantFrom('c1', 'c2', 'c3', 'c4');

/** Small memory items of the known shapes plus an unknown type. */
export const arbitraryEventItem = (): fc.Arbitrary<MemoryItem> =>
  fc.oneof(
    text.map((t): MemoryItem => ({ type: 'message', role: 'user', content: t })),
    text.map((t): MemoryItem => ({ type: 'message', role: 'assistant', content: t })),
    fc.tuple(callId, text).map(([id, args]): MemoryItem => ({ type: 'function_call', call_id: id, name: 'bash', arguments: args })),
    fc.tuple(fc.string({ maxLength: 8 }), text).map(([id, t]): MemoryItem => ({ type: 'reasoning', id: `r${id}`, summary: t })),
    text.map((t): MemoryItem => ({ type: 'web_search_call', query: t })),
  );

export interface ArbitraryEventsOptions {
  readonly maxLength?: number;
  readonly item?: fc.Arbitrary<MemoryItem>;
}

/** One new event of any kind that the fold handles (memory-changing or not). */
export const arbitraryNewEvent = (options: Pick<ArbitraryEventsOptions, 'item'> = {}): fc.Arbitrary<NewSessionEvent> => {
  const item = options.item ?? arbitraryEventItem();
  const items = fc.array(item, { maxLength: 4 });
  return fc.oneof(
    { weight: 5, arbitrary: items.map((xs): NewSessionEvent => ({ type: 'user.input', items: xs })) },
    { weight: 5, arbitrary: items.map((xs): NewSessionEvent => ({ type: 'model.output', items: xs })) },
    { weight: 2, arbitrary: items.map((xs): NewSessionEvent => ({ type: 'model.responded', items: xs, step: 1 })) },
    { weight: 4, arbitrary: fc.tuple(callId, text, fc.boolean()).map(([id, out, isError]): NewSessionEvent => ({ type: 'tool.result', callId: id, output: out, isError })) },
    { weight: 1, arbitrary: text.map((c): NewSessionEvent => ({ type: 'command.failed', command: c, exitCode: 1 })) },
    { weight: 1, arbitrary: fc.constantFrom('passed', 'failed').map((s): NewSessionEvent => ({ type: 'test.result', status: s as 'passed' | 'failed' })) },
    { weight: 1, arbitrary: fc.boolean().map((ok): NewSessionEvent => ({ type: 'approval.recorded', action: 'deploy', approved: ok })) },
    { weight: 1, arbitrary: text.map((d): NewSessionEvent => ({ type: 'sandbox.state', description: d })) },
    { weight: 1, arbitrary: text.map((p): NewSessionEvent => ({ type: 'artifact.changed', path: `f/${p}`, change: 'modified' })) },
    { weight: 1, arbitrary: fc.option(text, { nil: null }).map((s): NewSessionEvent => ({ type: 'memory.summary-set', summary: s })) },
    { weight: 1, arbitrary: fc.tuple(items, fc.option(text, { nil: undefined })).map(([xs, s]): NewSessionEvent => (s === undefined ? { type: 'memory.restored', items: xs } : { type: 'memory.restored', items: xs, summary: s })) },
    { weight: 1, arbitrary: fc.constant<NewSessionEvent>({ type: 'memory.cleared' }) },
    { weight: 1, arbitrary: fc.constant<NewSessionEvent>({ type: 'run.started', runId: 'r1' }) },
    { weight: 1, arbitrary: fc.nat(20).map((s): NewSessionEvent => ({ type: 'step.started', runId: 'r1', step: s })) },
    { weight: 1, arbitrary: fc.tuple(callId, fc.nat(20)).map(([id, s]): NewSessionEvent => ({ type: 'approval.requested', callId: id, name: 'deploy', arguments: '{}', step: s, runId: 'r1' })) },
    { weight: 1, arbitrary: fc.tuple(callId, fc.boolean()).map(([id, ok]): NewSessionEvent => ({ type: 'approval.recorded', action: 'deploy', approved: ok, callId: id, by: 'ana' })) },
    { weight: 1, arbitrary: callId.map((id): NewSessionEvent => ({ type: 'approval.call-started', callId: id, name: 'deploy', step: 1, runId: 'r1' })) },
  );
};

/** A sequence of appends (each a non-empty batch of events). */
export const arbitraryEventBatches = (options: ArbitraryEventsOptions = {}): fc.Arbitrary<NewSessionEvent[][]> =>
  fc.array(fc.array(arbitraryNewEvent(options), { minLength: 1, maxLength: 3 }), { maxLength: options.maxLength ?? 12 });
