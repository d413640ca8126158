// Round-trip laws of the provider converters over generated Chat Completions and Anthropic transcripts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isFunctionCall, isFunctionCallOutput, isMessage, isReasoning } from '../src/items/index.js';
import type { MemoryItem } from '../src/items/index.js';
import {
  fromAnthropicMessages,
  fromChatCompletions,
  reasoningTextOf,
  toAnthropicMessages,
  toChatCompletions,
} from '../src/providers/index.js';
import type { AnthropicConversation, ChatMessage } from '../src/providers/index.js';

type Json = Record<string, unknown>;

const text = fc.string({ maxLength: 8 });
const json = fc.jsonValue({ maxDepth: 2 });
const callId = fc.constantFrom('c1', 'c2', 'c3', 'toolu_x');
const OMIT = Symbol('omit');
/** Records with the ordinary prototype, as parsed JSON has. */
const record = <T extends Record<string, fc.Arbitrary<unknown>>>(shape: T) => fc.record(shape, { noNullPrototype: true });

/** Extra keys: mostly ones providers and agents really add, sometimes ones that clash with item keys. */
const extras = (...keys: string[]) =>
  fc.dictionary(fc.constantFrom(...keys), json, { maxKeys: 2, noNullPrototype: true });
const messageExtras = extras('extra', 'name', 'refusal', 'provider_specific_fields', 'function_call', 'id', 'type', 'empty_content');
const withOptional = (key: string, value: unknown): Json => (value === OMIT ? {} : { [key]: value });

// ---------------------------------------------------------------------------------------------
// Chat Completions transcripts

const chatPart = fc.oneof(
  record({ type: fc.constant('text'), text }),
  record({ type: fc.constant('image_url'), image_url: record({ url: text }) }),
  record({ type: fc.constant('refusal'), refusal: text }),
);
const chatContent = fc.oneof(text, fc.array(chatPart, { maxLength: 3 }));

const chatToolCall = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(callId, text, fc.oneof(text, json.map((v) => JSON.stringify(v))), extras('index')).map(
    ([id, name, args, more]) => ({ ...more, id, type: 'function', function: { name, arguments: args } }),
  ) },
  { weight: 1, arbitrary: record({ id: callId, type: fc.constant('custom'), custom: record({ name: text, input: text }) }) },
  { weight: 1, arbitrary: record({ id: callId, name: text, arguments: text }) },
  { weight: 1, arbitrary: record({ id: callId, type: fc.constant('function'), function: record({ name: text, arguments: text }), call_id: text }) },
);

const chatAssistant = fc
  .tuple(
    fc.oneof(chatContent, fc.constant(null), fc.constant(OMIT)),
    fc.oneof(fc.constant(OMIT), fc.array(chatToolCall, { maxLength: 3 })),
    fc.oneof(fc.constant(OMIT), text, fc.constant(null)),
    fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: messageExtras }),
  )
  .map(([content, calls, reasoningContent, more]) => ({
    role: 'assistant',
    ...withOptional('content', content),
    ...withOptional('tool_calls', calls),
    ...withOptional('reasoning_content', reasoningContent),
    ...more,
  }));

const chatMessage: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom('system', 'developer', 'user'), chatContent, messageExtras).map(([role, content, more]) => ({ role, content, ...more })) },
  { weight: 6, arbitrary: chatAssistant },
  {
    weight: 4,
    arbitrary: fc
      .tuple(callId, fc.oneof(chatContent, fc.constant(null), fc.constant(OMIT)), extras('extra', 'name', 'call_id', 'output', 'type'))
      .map(([id, content, more]) => ({ role: 'tool', tool_call_id: id, ...withOptional('content', content), ...more })),
  },
  { weight: 1, arbitrary: record({ role: fc.constantFrom('exit', 'tool', 'function'), content: chatContent, extra: json }) },
  { weight: 1, arbitrary: fc.constantFrom({ content: 'no role' }, { role: 'user', content: 42 }, 'not an object') },
);

const chatTranscript = fc.array(chatMessage, { maxLength: 12 }) as fc.Arbitrary<ChatMessage[]>;

// ---------------------------------------------------------------------------------------------
// Memory items

const reasoningText = (id: string, t: string): MemoryItem => ({ type: 'reasoning', id, content: [{ type: 'reasoning_text', text: t }] });
const argsText = fc.dictionary(fc.string({ maxLength: 4 }).filter((k) => k !== '__proto__'), json, { maxKeys: 3, noNullPrototype: true }).map((v) =>
  JSON.stringify(v),
);

/** Items in the Responses shape that every provider shape can hold (apart from reasoning ids). */
const canonicalItem = (roles: readonly string[]): fc.Arbitrary<MemoryItem> =>
  fc.oneof(
    fc.tuple(fc.constantFrom(...roles), chatContent, fc.option(text, { nil: undefined })).map(([role, content, id]) => ({
      type: 'message',
      role,
      content,
      ...(id === undefined ? {} : { id }),
    })),
    fc.tuple(callId, text, argsText).map(([id, name, args]): MemoryItem => ({ type: 'function_call', call_id: id, name, arguments: args })),
    fc.tuple(callId, text).map(([id, output]): MemoryItem => ({ type: 'function_call_output', call_id: id, output })),
    fc.tuple(text, text).map(([id, t]) => reasoningText(id, t)),
  );

/** Any item memory may hold, odd ones included. */
const anyItem: fc.Arbitrary<MemoryItem> = fc.oneof(
  { weight: 6, arbitrary: canonicalItem(['system', 'developer', 'user', 'assistant']) },
  {
    weight: 3,
    arbitrary: fc.constantFrom<MemoryItem>(
      { type: 'reasoning', id: 'r', summary: [{ type: 'summary_text', text: 's' }], encrypted_content: 'enc' },
      { type: 'reasoning', id: 'r', text: 't', signature: 'sig' },
      { type: 'reasoning', id: 'r', output: '[reasoning cleared]' },
      { type: 'reasoning', id: 'r' },
      { type: 'message', role: 'assistant', content: 'x', tool_calls: [{ id: 'c1', name: 'ls', arguments: '{}' }] },
      { type: 'message', role: 'assistant', content: '', empty_content: 'null', refusal: null },
      { type: 'message', role: 'user', content: '', empty_content: 'omitted' },
      { type: 'message', role: 'exit', content: 'bye', extra: { status: 1 } },
      { type: 'function_call', id: 'fc_1', call_id: 'c2', name: 'ls', arguments: 'not json', status: 'completed' },
      { type: 'function_call_output', call_id: 'c2', output: { ok: true } as unknown as string },
      { type: 'function_call_output', call_id: 'c3', output: '', empty_content: 'null', is_error: true },
      { type: 'web_search_call', id: 'ws', status: 'completed' },
      { type: 'chat_message', message: { role: 'user', content: 7 } },
      { type: 'anthropic_message', message: { role: 'user', content: 'x', type: 'odd' } },
    ),
  },
);

const reasoningIdsBlanked = (items: readonly MemoryItem[]): MemoryItem[] =>
  items.map((item) => (isReasoning(item) ? { ...item, id: '' } : item));

describe('Chat Completions round-trip laws', () => {
  it('a Chat transcript imported and exported again is deep-equal', () => {
    fc.assert(
      fc.property(chatTranscript, (messages) => {
        expect(toChatCompletions(fromChatCompletions(messages))).toStrictEqual(messages);
      }),
    );
  });

  it('Responses items exported and imported again are deep-equal, up to reasoning ids', () => {
    fc.assert(
      fc.property(fc.array(canonicalItem(['system', 'developer', 'user', 'assistant']), { maxLength: 12 }), (items) => {
        expect(reasoningIdsBlanked(fromChatCompletions(toChatCompletions(items)))).toStrictEqual(reasoningIdsBlanked(items));
      }),
    );
  });

  it('export is stable: what one export holds survives import and export, strict or not', () => {
    fc.assert(
      fc.property(fc.array(anyItem, { maxLength: 12 }), (items) => {
        const lossless = toChatCompletions(items);
        expect(toChatCompletions(fromChatCompletions(lossless))).toStrictEqual(lossless);
        const strict = toChatCompletions(items, { strict: true });
        expect(toChatCompletions(fromChatCompletions(strict))).toStrictEqual(strict);
        for (const message of strict) {
          expect(['system', 'developer', 'user', 'assistant', 'tool']).toContain(message.role);
        }
      }),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Anthropic conversations

const textBlock = fc.tuple(text, fc.boolean()).map(([t, cached]) => ({
  type: 'text',
  text: t,
  ...(cached ? { cache_control: { type: 'ephemeral' } } : {}),
}));
const userBlock = fc.oneof(
  textBlock,
  record({ type: fc.constant('image'), source: record({ type: fc.constant('url'), url: text }) }),
  fc
    .tuple(callId, fc.oneof(text, fc.array(textBlock, { maxLength: 2 }), fc.constant(OMIT)), fc.oneof(fc.constant(OMIT), fc.boolean()), fc.boolean())
    .map(([id, content, isError, clash]) => ({
      type: 'tool_result',
      tool_use_id: id,
      ...withOptional('content', content),
      ...withOptional('is_error', isError),
      ...(clash ? { output: 'clash' } : {}),
    })),
);
const toolInput = fc.dictionary(fc.string({ maxLength: 4 }).filter((k) => k !== '__proto__'), json, { maxKeys: 3, noNullPrototype: true });
const assistantBlock = fc.oneof(
  textBlock,
  fc.tuple(text, fc.oneof(text, fc.constant(OMIT))).map(([t, sig]) => ({ type: 'thinking', thinking: t, ...withOptional('signature', sig) })),
  record({ type: fc.constant('redacted_thinking'), data: text }),
  fc.tuple(callId, text, toolInput, fc.boolean()).map(([id, name, input, clash]) => ({
    type: 'tool_use',
    id,
    name,
    input,
    ...(clash ? { arguments: 'clash' } : {}),
  })),
  record({ type: fc.constant('server_tool_use'), id: text, name: text, input: toolInput }),
);
const turn = (role: 'user' | 'assistant', block: fc.Arbitrary<unknown>) =>
  fc
    .tuple(fc.oneof(text, fc.array(block, { maxLength: 4 })), fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: extras('id', 'type', 'empty_content', 'tool_calls') }))
    .map(([content, more]) => ({ role, content, ...more }));
const oddTurn = fc.constantFrom<unknown>(
  { role: 'exit', content: 'bye' },
  { role: 'system', content: 'inside messages' },
  { role: 'user', content: null },
  'not an object',
);

const anthropicConversation: fc.Arbitrary<AnthropicConversation> = fc
  .tuple(
    fc.oneof(fc.constant(OMIT), text, fc.array(textBlock, { maxLength: 2 })),
    fc.boolean(),
    fc.array(fc.tuple(turn('user', userBlock), turn('assistant', assistantBlock), fc.option(oddTurn, { nil: undefined })), { maxLength: 4 }),
  )
  .map(([system, startWithAssistant, rounds]) => {
    const messages = rounds.flatMap(([user, assistant, odd]) => (odd === undefined ? [user, assistant] : [user, assistant, odd]));
    return { ...withOptional('system', system), messages: startWithAssistant ? messages.slice(1) : messages } as unknown as AnthropicConversation;
  });

/** What a conversation says, part by part: same-side items may be merged into one turn and still say the same. */
const gist = (items: readonly MemoryItem[]): unknown[] =>
  items.flatMap((item): unknown[] => {
    if (isFunctionCall(item)) return [{ call: item.call_id, name: item.name, input: JSON.parse(item.arguments) as unknown }];
    if (isFunctionCallOutput(item)) return [{ output: item.call_id, content: item.output }];
    if (isReasoning(item)) return [{ reasoning: reasoningTextOf(item), signature: item['signature'] }];
    if (isMessage(item)) {
      const parts = typeof item.content === 'string' ? [item.content] : item.content.map((part) => part.text ?? part);
      return parts.map((part) => ({ role: item.role, part }));
    }
    return [item];
  });

describe('Anthropic Messages round-trip laws', () => {
  it('an alternating conversation imported and exported again is deep-equal', () => {
    fc.assert(
      fc.property(anthropicConversation, (conversation) => {
        expect(toAnthropicMessages(fromAnthropicMessages(conversation))).toStrictEqual(conversation);
      }),
    );
  });

  it('items exported and imported again say the same, part by part', () => {
    fc.assert(
      fc.property(fc.array(canonicalItem(['user', 'assistant']), { maxLength: 12 }), (items) => {
        expect(gist(fromAnthropicMessages(toAnthropicMessages(items)))).toStrictEqual(gist(items));
      }),
    );
  });

  it('export is stable and alternates: what one export holds survives import and export, strict or not', () => {
    fc.assert(
      fc.property(fc.array(anyItem, { maxLength: 12 }), (items) => {
        const lossless = toAnthropicMessages(items);
        expect(toAnthropicMessages(fromAnthropicMessages(lossless))).toStrictEqual(lossless);
        const strict = toAnthropicMessages(items, { strict: true });
        expect(toAnthropicMessages(fromAnthropicMessages(strict))).toStrictEqual(strict);
        strict.messages.forEach((message, index) => {
          expect(['user', 'assistant']).toContain(message.role);
          if (index > 0) expect(message.role).not.toBe(strict.messages[index - 1]?.role);
        });
      }),
    );
  });
});
