import { describe, expect, it } from 'vitest';
import {
  approxChars,
  assistantMessage,
  functionCall,
  functionCallOutput,
  itemsOfInput,
  lastAssistantMessage,
  reasoning,
  systemMessage,
  textOf,
  toolNamesByCallId,
  userMessage,
  type MemoryItem,
} from '../../src/items/index.js';

describe('item helpers', () => {
  it('builds the known shapes', () => {
    expect(userMessage('hi')).toEqual({ type: 'message', role: 'user', content: 'hi' });
    expect(systemMessage('s')).toEqual({ type: 'message', role: 'system', content: 's' });
    expect(assistantMessage('a')).toEqual({ type: 'message', role: 'assistant', content: 'a' });
    expect(assistantMessage('a', [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{}' } }]).tool_calls).toHaveLength(1);
    expect(functionCall('c1', 'read_file', { path: 'a.ts' })).toEqual({
      type: 'function_call',
      call_id: 'c1',
      name: 'read_file',
      arguments: '{"path":"a.ts"}',
    });
    expect(functionCallOutput('c1', 'ok')).toEqual({ type: 'function_call_output', call_id: 'c1', output: 'ok' });
    expect(reasoning('r1', 'think')).toEqual({ type: 'reasoning', id: 'r1', summary: 'think' });
  });

  it('textOf reads string and part content, and is empty for non-messages', () => {
    expect(textOf(userMessage('x'))).toBe('x');
    expect(textOf({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'image' }, { type: 'text', text: 'b' }] })).toBe('a\nb');
    expect(textOf(functionCallOutput('c', 'out'))).toBe('');
    expect(textOf(undefined)).toBe('');
  });

  it('approxChars counts strings, JSON text of objects, and sums arrays', () => {
    const item = userMessage('hello');
    expect(approxChars('abc')).toBe(3);
    expect(approxChars(item)).toBe(JSON.stringify(item).length);
    expect(approxChars([item, item])).toBe(2 * JSON.stringify(item).length);
    expect(approxChars([])).toBe(0);
  });

  it('joins call ids to names through function_call, flat and nested tool_calls, and tool_use parts', () => {
    const names = toolNamesByCallId([
      functionCall('a', 'read_file', {}),
      assistantMessage('', [{ id: 'b', name: 'grep' }, { id: 'c', function: { name: 'bash' } }]),
      { type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 'd', name: 'edit', input: {} }] },
    ]);
    expect(Object.fromEntries(names)).toEqual({ a: 'read_file', b: 'grep', c: 'bash', d: 'edit' });
  });

  it('passes unknown item types through untouched', () => {
    const odd = { type: 'web_search_call', id: 'w1', status: 'completed' };
    expect(approxChars(odd)).toBe(JSON.stringify(odd).length);
    expect(textOf(odd)).toBe('');
  });
});

describe('inputs and answers', () => {
  it('itemsOfInput: a string is one user message, a list is copied, an item is one item', () => {
    expect(itemsOfInput('fix it')).toEqual([userMessage('fix it')]);
    const list = [userMessage('a'), assistantMessage('b')];
    const copied = itemsOfInput(list);
    expect(copied).toEqual(list);
    expect(copied).not.toBe(list);
    const item = functionCallOutput('c1', 'ok');
    expect(itemsOfInput(item)).toEqual([item]);
    expect(itemsOfInput([])).toEqual([]);
  });

  it('lastAssistantMessage: the newest assistant message, passing over other items and non-objects', () => {
    const first = assistantMessage('first');
    const last = assistantMessage('last');
    expect(lastAssistantMessage([first, userMessage('u'), last, functionCall('c', 'bash'), systemMessage('s')])).toBe(last);
    expect(lastAssistantMessage([userMessage('u'), functionCallOutput('c', 'o')])).toBeUndefined();
    expect(lastAssistantMessage([first, null as unknown as MemoryItem, 'text' as unknown as MemoryItem])).toBe(first);
    expect(lastAssistantMessage([])).toBeUndefined();
  });
});
