// The LangChain.js bridge with real @langchain/core messages: converters and trimMessages backed by the projector.
import {
  AIMessage,
  AIMessageChunk,
  ChatMessageChunk,
  FunctionMessageChunk,
  HumanMessage,
  HumanMessageChunk,
  mapChatMessagesToStoredMessages,
  SystemMessage,
  SystemMessageChunk,
  ToolMessage,
  ToolMessageChunk,
  trimMessages as lcTrimMessages,
  type BaseMessage,
} from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { fromBaseMessages, toBaseMessages, trimMessages, trimMessagesWithReport } from '../../src/bridges/langchain/index.js';
import { DefaultContextProjector, functionCall, functionCallOutput, isInvalidOptionsError, userMessage } from '../../src/index.js';

const stored = (messages: BaseMessage[]) => mapChatMessagesToStoredMessages(messages);
const words = (messages: BaseMessage[]): number =>
  messages.reduce((sum, m) => sum + (typeof m.content === 'string' ? m.content.split(/\s+/).filter(Boolean).length : 5) + 1, 0);

const history = (): BaseMessage[] => [
  new SystemMessage('you are a helpful assistant'),
  new HumanMessage({ content: 'what is the weather in paris', id: 'h1' }),
  new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'weather', args: { city: 'paris' } }, { id: 'c2', name: 'weather', args: { city: 'lyon' } }] }),
  new ToolMessage({ content: 'sunny and warm today in paris', tool_call_id: 'c1', name: 'weather' }),
  new ToolMessage({ content: 'rainy in lyon', tool_call_id: 'c2', name: 'weather' }),
  new AIMessage({ content: 'paris is sunny', response_metadata: { model: 'x' }, additional_kwargs: { refusal: null } }),
  new HumanMessage('and tomorrow'),
];

describe('langchain bridge', () => {
  it('converts BaseMessages to items and back without loss; tool calls pair with ToolMessages', () => {
    const messages = history();
    const items = fromBaseMessages(messages);
    expect(items.map((i) => i.type)).toEqual(['message', 'message', 'message', 'function_call_output', 'function_call_output', 'message', 'message']);
    expect(items[2]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'c1', name: 'weather', arguments: '{"city":"paris"}' }, { id: 'c2' }] });
    expect(items[3]).toMatchObject({ call_id: 'c1', output: 'sunny and warm today in paris', name: 'weather' });
    const back = toBaseMessages(items);
    expect(back.map((m) => m.constructor.name)).toEqual(messages.map((m) => m.constructor.name));
    expect(stored(back)).toEqual(stored(messages));
    expect(stored(toBaseMessages(JSON.parse(JSON.stringify(items))))).toEqual(stored(messages));
  });

  it('messages keep their class through items and the log: chunks come back as chunks, every stored field kept', () => {
    const streamed = new AIMessageChunk({ content: 'hel', id: 'a2', tool_call_chunks: [{ id: 'c9', name: 'w', args: '{"x":', index: 0, type: 'tool_call_chunk' }] }).concat(
      new AIMessageChunk({ content: 'lo', tool_call_chunks: [{ args: '1}', index: 0, type: 'tool_call_chunk' }], usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } } as never),
    );
    const messages: BaseMessage[] = [
      new SystemMessageChunk({ content: 's', id: 's' }),
      new HumanMessageChunk({ content: 'hi', id: 'h' }),
      new AIMessageChunk({ content: '', id: 'a', tool_calls: [{ id: 'c1', name: 'w', args: { x: 1 }, type: 'tool_call' }] }),
      new ToolMessageChunk({ content: 'out', tool_call_id: 'c1', id: 't' }),
      streamed,
      new ToolMessage({ content: 'streamed out', tool_call_id: 'c9', id: 't9' }),
      new ChatMessageChunk({ content: 'c', role: 'critic' }),
      new FunctionMessageChunk({ content: 'f', name: 'fn' }),
      new AIMessage('plain'),
    ];
    const back = toBaseMessages(JSON.parse(JSON.stringify(fromBaseMessages(messages))));
    expect(back.map((m) => m.constructor.name)).toEqual(messages.map((m) => m.constructor.name));
    expect(stored(back)).toEqual(stored(messages));
    expect(back).toEqual(messages);
  });

  it('converts items from other sources: Responses function calls join an AI message; a cleared result keeps its call name', () => {
    const messages = toBaseMessages([userMessage('hi'), functionCall('k1', 'ls', { dir: '/' }), functionCallOutput('k1', '[tool result cleared: ls(k1)]')]);
    expect(messages.map((m) => m.getType())).toEqual(['human', 'ai', 'tool']);
    expect((messages[1] as AIMessage).tool_calls).toEqual([{ id: 'k1', name: 'ls', args: { dir: '/' } }]);
    expect(messages[2]).toMatchObject({ tool_call_id: 'k1', name: 'ls', content: '[tool result cleared: ls(k1)]' });
  });

  it('trimMessages keeps the newest messages that fit, the system message, starts on human, and never splits a tool call from its results', async () => {
    const messages = history();
    // LangChain's own trimMessages on the same input can return ToolMessages without their AI call
    const theirs = await lcTrimMessages(messages, { maxTokens: 18, tokenCounter: words, strategy: 'last', includeSystem: true });
    const ours = await trimMessagesWithReport(messages, { maxTokens: 18, tokenCounter: words, strategy: 'last', includeSystem: true });
    const ids = (list: BaseMessage[]) => list.map((m) => `${m.getType()}:${typeof m.content === 'string' ? m.content.slice(0, 12) : ''}`);
    expect(ids(theirs)).toContain('tool:rainy in lyo');
    expect(ids(theirs)).not.toContain('ai:');
    expect(ids(ours.messages)).toEqual(['system:you are a he', 'ai:paris is sun', 'human:and tomorrow']);
    expect(words(ours.messages)).toBeLessThanOrEqual(18);
    expect(ours.report.droppedItemCount).toBe(4);
    // LangChain's selection keeps the lyon result (4) without its call (2): the pairing law drops it; the paris result (3) did not fit
    expect(ours.report.fates.filter((f) => f.rule === 'pairing').map((f) => f.index)).toEqual([4]);
    expect(ours.report.fates.filter((f) => f.rule === 'maxTokens').map((f) => f.index)).toEqual([1, 2, 3]);
    expect(ids(ours.messages)).toEqual(ids(theirs).filter((id) => id !== 'tool:rainy in lyo'));

    // with room for the whole tool exchange, it is kept together; startOn drops what comes before the first human
    const wide = await trimMessages(messages, { maxTokens: 40, tokenCounter: words, includeSystem: true, startOn: 'human' });
    expect(ids(wide)).toEqual(ids(messages));
    const narrow = await trimMessagesWithReport(messages, { maxTokens: 30, tokenCounter: words, includeSystem: true, startOn: 'human' });
    expect(ids(narrow.messages)).toEqual(['system:you are a he', 'human:and tomorrow']);
    expect(narrow.report.notes.some((n) => n.startsWith('startOn applied'))).toBe(true);
    expect(narrow.report.fates.filter((f) => f.rule === 'tail' && f.fate === 'dropped').map((f) => f.index)).toEqual([2, 3, 4, 5]);
    // a model's getNumTokens works as the counter too
    const model = { getNumTokens: async (content: BaseMessage['content']) => (typeof content === 'string' ? content.length : 10) };
    expect(ids(await trimMessages(messages, { maxTokens: 12, tokenCounter: model }))).toEqual(['human:and tomorrow']);
  });

  it('trimMessages refuses bad options by name (INVALID_OPTIONS), where LangChain throws a plain Error or goes on', async () => {
    const refused = async (options: Record<string, unknown>): Promise<unknown> =>
      trimMessages(history(), { maxTokens: 10, tokenCounter: words, ...options } as never).then(
        () => 'resolved',
        (e: unknown) => (isInvalidOptionsError(e) ? e.issues.map((i) => i.path) : String(e)),
      );
    expect(await refused({ strategy: 'middle' })).toEqual(['strategy']);
    expect(await refused({ strategy: 'first', startOn: 'human' })).toEqual(['startOn']);
    expect(await refused({ strategy: 'first', includeSystem: true })).toEqual(['includeSystem']);
    expect(await refused({ maxTokens: 1.5 })).toEqual(['maxTokens']);
    expect(await refused({ tokenCounter: {} })).toEqual(['tokenCounter']);
    expect(await refused({ allowPartial: true, textSplitter: 42 })).toEqual(['textSplitter']);
    expect(await refused({ strategy: 'first', projector: new DefaultContextProjector() })).toEqual(['projector']);
    expect(() => trimMessages(null as never)).toThrow(/takes \(messages, options\) or \(options\)/);
    expect(await trimMessages(history(), { maxTokens: 0, tokenCounter: words })).toEqual([]);
  });

  it('a projector given (the first version of this bridge) still selects as it did: the newest messages that fit, by maxItems', async () => {
    const projected = await trimMessagesWithReport(history(), { maxTokens: 18, tokenCounter: words, includeSystem: true, projector: new DefaultContextProjector() });
    const ids = (list: BaseMessage[]) => list.map((m) => `${m.getType()}:${typeof m.content === 'string' ? m.content.slice(0, 12) : ''}`);
    expect(ids(projected.messages)).toEqual(['system:you are a he', 'ai:paris is sun', 'human:and tomorrow']);
    expect(projected.report.fates.filter((f) => f.rule === 'pairing').map((f) => f.index)).toEqual([3, 4]);
  });
});
