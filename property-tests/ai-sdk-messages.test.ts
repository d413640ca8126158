// Round-trip laws of the AI SDK converters over generated ModelMessage transcripts (ai 6 types).
import fc from 'fast-check';
import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { fromModelMessages, toModelMessages } from '../src/bridges/ai-sdk/index.js';
import { DefaultContextProjector, projectForModel } from '../src/context/index.js';

const text = fc.string({ maxLength: 8 });
const json = fc.jsonValue({ maxDepth: 2 });
const callId = fc.constantFrom('c1', 'c2', 'c3');
const record = <T extends Record<string, fc.Arbitrary<unknown>>>(shape: T, requiredKeys?: (keyof T)[]) =>
  fc.record(shape, { noNullPrototype: true, ...(requiredKeys ? { requiredKeys } : {}) } as never) as fc.Arbitrary<{ [K in keyof T]: fc.Arbitrary<unknown> extends T[K] ? unknown : T[K] extends fc.Arbitrary<infer V> ? V : never }>;
const providerOptions = fc.constantFrom({ openai: { itemId: 'msg_1' } }, { anthropic: { cacheControl: { type: 'ephemeral' } } });
const withOptions = <T extends object>(arb: fc.Arbitrary<T>) =>
  fc.tuple(arb, fc.option(providerOptions, { nil: undefined })).map(([value, options]) => (options ? { ...value, providerOptions: options } : value));

const data = fc.oneof(
  fc.base64String({ maxLength: 12 }),
  fc.constantFrom('https://example.com/a.png', 'https://example.com/b.pdf').map((u) => new URL(u)),
  fc.uint8Array({ maxLength: 6 }),
);
const textPart = withOptions(fc.record({ type: fc.constant('text' as const), text }));
const imagePart = withOptions(fc.record({ type: fc.constant('image' as const), image: data, mediaType: fc.constantFrom('image/png', 'image/jpeg') }));
const filePart = withOptions(fc.record({ type: fc.constant('file' as const), data, mediaType: fc.constantFrom('application/pdf', 'text/plain') }));
const reasoningPart = withOptions(fc.record({ type: fc.constant('reasoning' as const), text }));
const toolCallPart = withOptions(
  fc.record({ type: fc.constant('tool-call' as const), toolCallId: callId, toolName: text, input: fc.dictionary(text, json, { maxKeys: 3, noNullPrototype: true }) }),
);
const output = fc.oneof(
  fc.record({ type: fc.constant('text' as const), value: text }),
  fc.record({ type: fc.constant('json' as const), value: json }),
  fc.record({ type: fc.constant('error-text' as const), value: text }),
  fc.record({ type: fc.constant('error-json' as const), value: json }),
  fc.record({ type: fc.constant('execution-denied' as const), reason: text }),
  fc.record({ type: fc.constant('content' as const), value: fc.array(fc.record({ type: fc.constant('text' as const), text }), { maxLength: 2 }) }),
);
const toolResultPart = withOptions(fc.record({ type: fc.constant('tool-result' as const), toolCallId: callId, toolName: text, output }));
const approvalRequest = fc.record({ type: fc.constant('tool-approval-request' as const), approvalId: text, toolCallId: callId });
const approvalResponse = fc.record({ type: fc.constant('tool-approval-response' as const), approvalId: text, approved: fc.boolean() });

const message: fc.Arbitrary<ModelMessage> = fc.oneof(
  withOptions(fc.record({ role: fc.constant('system' as const), content: text })),
  withOptions(fc.record({ role: fc.constant('user' as const), content: fc.oneof(text, fc.array(fc.oneof(textPart, imagePart, filePart), { maxLength: 3 })) })),
  withOptions(
    fc.record({
      role: fc.constant('assistant' as const),
      content: fc.oneof(
        text,
        fc.array(
          fc.oneof(textPart, filePart, reasoningPart, toolCallPart, { arbitrary: toolResultPart.map((p) => ({ ...p, providerExecuted: true })), weight: 1 }, approvalRequest),
          { maxLength: 4 },
        ),
      ),
    }),
  ),
  withOptions(fc.record({ role: fc.constant('tool' as const), content: fc.array(fc.oneof(toolResultPart, approvalResponse), { maxLength: 3 }) })),
) as fc.Arbitrary<ModelMessage>;
void record;

const transcript = fc.array(message, { maxLength: 8 });
/** What the log gives back: the items as JSON text, parsed. */
const stored = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('AI SDK converters', () => {
  it('toModelMessages(fromModelMessages(m)) gives m back, also after the items went through JSON (the log)', () => {
    fc.assert(
      fc.property(transcript, (messages) => {
        expect(toModelMessages(fromModelMessages(messages))).toEqual(messages);
        expect(toModelMessages(stored(fromModelMessages(messages)))).toEqual(messages);
      }),
    );
  });

  it('fromModelMessages(toModelMessages(items)) gives the items back for items made by fromModelMessages', () => {
    fc.assert(
      fc.property(transcript, (messages) => {
        const items = stored(fromModelMessages(messages));
        expect(stored(fromModelMessages(toModelMessages(items)))).toEqual(items);
      }),
    );
  });

  it('a projection of converted items converts back to messages whose tool results all follow their calls', () => {
    const projector = new DefaultContextProjector();
    fc.assert(
      fc.property(transcript, fc.integer({ min: 1, max: 6 }), (messages, maxItems) => {
        // only transcripts whose results follow their calls, as a real conversation has
        const seen = new Set<string>();
        for (const m of messages) {
          if (!Array.isArray(m.content)) continue;
          for (const p of m.content as { type: string; toolCallId?: string }[]) {
            if (p.type === 'tool-call') seen.add(p.toolCallId!);
            if (p.type === 'tool-result' && !seen.has(p.toolCallId!)) return;
          }
        }
        // What the bridge sends: the projection plus the runtime's orphan step (a second result for one call is dropped).
        const projected = toModelMessages(projectForModel(projector, fromModelMessages(messages), { maxItems }).items);
        const calls = new Set<string>();
        for (const m of projected) {
          if (!Array.isArray(m.content)) continue;
          for (const p of m.content as { type: string; toolCallId?: string }[]) {
            if (p.type === 'tool-call') calls.add(p.toolCallId!);
            if (p.type === 'tool-result') expect(calls.has(p.toolCallId!)).toBe(true);
          }
        }
      }),
    );
  });
});
