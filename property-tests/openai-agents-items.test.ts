// Round-trip laws of the Agents SDK converters over generated AgentInputItem lists.
import fc from 'fast-check';
import type { AgentInputItem } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { fromAgentInputItems, toAgentInputItems } from '../src/bridges/openai-agents/index.js';
import { TypeAwareContextProjector } from '../src/context/index.js';

const text = fc.string({ maxLength: 8 });
const callId = fc.constantFrom('c1', 'c2', 'c3');
const providerData = fc.option(fc.constantFrom({ annotations: [] }, { itemId: 'x' }), { nil: undefined });
const opt = <T extends object>(value: T, extra: Record<string, unknown | undefined>): T =>
  Object.fromEntries(Object.entries({ ...value, ...extra }).filter(([, v]) => v !== undefined)) as T;

const item: fc.Arbitrary<AgentInputItem> = fc.oneof(
  fc.tuple(fc.boolean(), fc.oneof(text, fc.array(fc.record({ type: fc.constant('input_text'), text }), { maxLength: 2 })), providerData).map(([typed, content, data]) =>
    opt({ role: 'user', content } as AgentInputItem, { type: typed ? 'message' : undefined, providerData: data }),
  ),
  fc.tuple(fc.boolean(), text).map(([typed, content]) => opt({ role: 'system', content } as AgentInputItem, { type: typed ? 'message' : undefined })),
  fc.tuple(fc.array(fc.record({ type: fc.constant('output_text'), text }), { maxLength: 2 }), fc.option(text, { nil: undefined })).map(([content, id]) =>
    opt({ type: 'message', role: 'assistant', status: 'completed', content } as AgentInputItem, { id }),
  ),
  fc.tuple(callId, text, fc.jsonValue({ maxDepth: 1 }), fc.option(text, { nil: undefined })).map(([c, name, args, id]) =>
    opt({ type: 'function_call', callId: c, name, arguments: JSON.stringify(args) } as AgentInputItem, { id, status: 'completed' }),
  ),
  fc.tuple(callId, text, fc.oneof(text, fc.record({ type: fc.constant('text'), text }), fc.array(fc.record({ type: fc.constant('input_text'), text }), { maxLength: 2 }))).map(
    ([c, name, output]) => ({ type: 'function_call_result', callId: c, name, status: 'completed', output }) as AgentInputItem,
  ),
  fc.tuple(fc.option(text, { nil: undefined }), fc.array(fc.record({ type: fc.constant('input_text'), text }), { maxLength: 2 })).map(([id, content]) =>
    opt({ type: 'reasoning', content } as AgentInputItem, { id }),
  ),
  fc.tuple(text, fc.option(text, { nil: undefined })).map(([name, output]) => opt({ type: 'hosted_tool_call', name, status: 'completed' } as AgentInputItem, { output })),
  fc.constantFrom('k1', 'k2').map((c) => ({ type: 'computer_call', callId: c, status: 'completed', action: { type: 'screenshot' } }) as AgentInputItem),
  fc.constantFrom('k1', 'k2').map((c) => ({ type: 'computer_call_result', callId: c, output: { type: 'computer_screenshot', data: 'data:image/png;base64,AA' } }) as AgentInputItem),
);

const stored = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('Agents SDK converters', () => {
  it('toAgentInputItems(fromAgentInputItems(x)) gives x back, also after the items went through JSON (the log)', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 8 }), (items) => {
        expect(toAgentInputItems(fromAgentInputItems(items))).toEqual(items);
        expect(toAgentInputItems(stored(fromAgentInputItems(items)))).toEqual(items);
      }),
    );
  });

  it('a projection keeps function calls with their results (callId pairs are recognised)', () => {
    const projector = new TypeAwareContextProjector();
    fc.assert(
      fc.property(fc.array(item, { maxLength: 10 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 2 }), (items, maxItems, recent) => {
        const source = fromAgentInputItems(items);
        const projected = toAgentInputItems(projector.project(source, { maxItems, maxRecentToolResults: recent }).items) as unknown as Record<string, unknown>[];
        const count = (list: readonly Record<string, unknown>[], type: string, id: string) => list.filter((i) => i['type'] === type && i['callId'] === id).length;
        for (const id of ['c1', 'c2', 'c3']) {
          const hadBoth = count(items as never, 'function_call', id) === 1 && count(items as never, 'function_call_result', id) === 1;
          // A result pairs with the nearest earlier unanswered call of its id; one before its call is an orphan.
          const at = (type: string) => (items as unknown as Record<string, unknown>[]).findIndex((i) => i['type'] === type && i['callId'] === id);
          if (!hadBoth || at('function_call') > at('function_call_result')) continue;
          expect(count(projected, 'function_call', id)).toBe(count(projected, 'function_call_result', id));
        }
      }),
    );
  });
});
