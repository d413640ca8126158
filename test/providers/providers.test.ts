// Examples and round trips of the Chat Completions and Anthropic Messages converters.
import { describe, expect, it } from 'vitest';
import {
  assistantMessage,
  functionCall,
  functionCallOutput,
  reasoning,
  systemMessage,
  userMessage,
} from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';
import {
  fromAnthropicMessages,
  fromChatCompletions,
  toAnthropicMessages,
  toChatCompletions,
} from '../../src/providers/index.js';
import type { AnthropicConversation, ChatMessage } from '../../src/providers/index.js';

const bash = (id: string, command: string, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'function',
  function: { name: 'bash', arguments: JSON.stringify({ command }) },
  ...extra,
});

const thought = (id: string, text: string): MemoryItem => ({
  type: 'reasoning',
  id,
  content: [{ type: 'reasoning_text', text }],
});

describe('fromChatCompletions / toChatCompletions', () => {
  // What the OpenAI SDK returns and users push back: content null with tool calls, refusal null.
  const sdkTranscript: ChatMessage[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Why does the test fail?' },
    {
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [bash('call_1', 'npm test'), bash('call_2', 'git diff')],
    },
    { role: 'tool', tool_call_id: 'call_1', content: '1 failing' },
    { role: 'tool', tool_call_id: 'call_2', content: 'diff --git a/x b/x' },
    { role: 'assistant', content: 'The assertion in x.test.ts is stale.', refusal: null },
  ];

  it('imports tool calls as function_call items and outputs as function_call_output items', () => {
    expect(fromChatCompletions(sdkTranscript)).toStrictEqual([
      systemMessage('You are a coding agent.'),
      userMessage('Why does the test fail?'),
      { type: 'message', role: 'assistant', content: '', empty_content: 'null', refusal: null },
      functionCall('call_1', 'bash', { command: 'npm test' }),
      functionCall('call_2', 'bash', { command: 'git diff' }),
      functionCallOutput('call_1', '1 failing'),
      functionCallOutput('call_2', 'diff --git a/x b/x'),
      { type: 'message', role: 'assistant', content: 'The assertion in x.test.ts is stale.', refusal: null },
    ]);
  });

  it('exports the imported transcript deep-equal, multiple calls in one assistant turn included', () => {
    expect(toChatCompletions(fromChatCompletions(sdkTranscript))).toStrictEqual(sdkTranscript);
  });

  it('merges consecutive function calls into the assistant message before them, or a new one with null content', () => {
    const items = [
      userMessage('go'),
      assistantMessage('Let me look.'),
      functionCall('a', 'ls', {}),
      functionCall('b', 'cat', { path: 'x' }),
      functionCallOutput('a', 'x'),
      functionCallOutput('b', 'hello'),
      functionCall('c', 'rm', { path: 'x' }),
      functionCallOutput('c', 'ok'),
    ];
    expect(toChatCompletions(items)).toStrictEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'ls', arguments: '{}' } },
          { id: 'b', type: 'function', function: { name: 'cat', arguments: '{"path":"x"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'x' },
      { role: 'tool', tool_call_id: 'b', content: 'hello' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'rm', arguments: '{"path":"x"}' } }],
      },
      { role: 'tool', tool_call_id: 'c', content: 'ok' },
    ]);
    expect(fromChatCompletions(toChatCompletions(items))).toStrictEqual(items);
  });

  it('puts reasoning on the assistant message that follows it, and back in front of it', () => {
    const items = [userMessage('q'), thought('r1', 'think first'), assistantMessage('answer')];
    const messages = toChatCompletions(items);
    expect(messages).toStrictEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'answer', reasoning_content: 'think first' },
    ]);
    expect(fromChatCompletions(messages)).toStrictEqual([userMessage('q'), thought('reasoning_1', 'think first'), assistantMessage('answer')]);
  });

  it('puts reasoning before a function call on the new assistant message', () => {
    const items = [userMessage('q'), thought('r', 'need ls'), functionCall('a', 'ls', {}), functionCallOutput('a', 'x')];
    expect(toChatCompletions(items)[1]).toStrictEqual({
      role: 'assistant',
      content: null,
      reasoning_content: 'need ls',
      tool_calls: [{ id: 'a', type: 'function', function: { name: 'ls', arguments: '{}' } }],
    });
    expect(fromChatCompletions(toChatCompletions(items))).toStrictEqual([
      userMessage('q'),
      thought('reasoning_1', 'need ls'),
      functionCall('a', 'ls', {}),
      functionCallOutput('a', 'x'),
    ]);
  });

  it('gives reasoning with no assistant message after it a message of its own (content null)', () => {
    const items = [thought('r1', 'one'), thought('r2', 'two'), userMessage('next')];
    const messages = toChatCompletions(items);
    expect(messages).toStrictEqual([
      { role: 'assistant', content: null, reasoning_content: 'one' },
      { role: 'assistant', content: null, reasoning_content: 'two' },
      { role: 'user', content: 'next' },
    ]);
    expect(fromChatCompletions(messages)).toStrictEqual([thought('reasoning_0', 'one'), thought('reasoning_1', 'two'), userMessage('next')]);
  });

  it('reads reasoning text from summary, text or content, and leaves it out on request', () => {
    const items = [reasoning('r', 'a summary'), assistantMessage('x')];
    expect(toChatCompletions(items)).toStrictEqual([{ role: 'assistant', content: 'x', reasoning_content: 'a summary' }]);
    expect(toChatCompletions([{ type: 'reasoning', id: 'r', text: 't' }, assistantMessage('x')])[0]).toHaveProperty('reasoning_content', 't');
    expect(toChatCompletions(items, { reasoning: 'omit' })).toStrictEqual([{ role: 'assistant', content: 'x' }]);
  });

  it('keeps unknown roles, extra keys and tool-call keys (mini-SWE-agent shape)', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'task', extra: { interrupt: false } },
      {
        content: 'THOUGHT: look',
        role: 'assistant',
        tool_calls: [{ index: 0, ...bash('call_00_x', 'ls') }],
        function_call: null,
        reasoning_content: 'hmm',
        provider_specific_fields: { reasoning_content: 'hmm' },
        extra: { actions: [{ command: 'ls' }], cost: 0.1 },
      },
      { content: '<returncode>0</returncode>', extra: { returncode: 0 }, tool_call_id: 'call_00_x', role: 'tool' },
      { role: 'exit', content: 'diff', extra: { exit_status: 'Submitted' } },
    ];
    const items = fromChatCompletions(messages);
    expect(items).toStrictEqual([
      systemMessage('sys'),
      { type: 'message', role: 'user', content: 'task', extra: { interrupt: false } },
      thought('reasoning_2', 'hmm'),
      {
        type: 'message',
        role: 'assistant',
        content: 'THOUGHT: look',
        function_call: null,
        provider_specific_fields: { reasoning_content: 'hmm' },
        extra: { actions: [{ command: 'ls' }], cost: 0.1 },
      },
      { type: 'function_call', call_id: 'call_00_x', name: 'bash', arguments: '{"command":"ls"}', index: 0 },
      { type: 'function_call_output', call_id: 'call_00_x', output: '<returncode>0</returncode>', extra: { returncode: 0 } },
      { type: 'message', role: 'exit', content: 'diff', extra: { exit_status: 'Submitted' } },
    ]);
    expect(toChatCompletions(items)).toStrictEqual(messages);
  });

  it('keeps content parts arrays as they are', () => {
    const messages: ChatMessage[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'a cat' }] },
      { role: 'tool', tool_call_id: 'x', content: [{ type: 'text', text: 'out' }] },
    ];
    const items = fromChatCompletions(messages);
    expect(items[0]).toStrictEqual({ type: 'message', ...messages[0] });
    expect(items[2]).toStrictEqual({ type: 'function_call_output', call_id: 'x', output: [{ type: 'text', text: 'out' }] });
    expect(toChatCompletions(items)).toStrictEqual(messages);
  });

  it('does not merge two consecutive tool-call messages, nor a reasoning-only message into the next', () => {
    const messages: ChatMessage[] = [
      { role: 'assistant', content: null, tool_calls: [bash('a', 'ls')] },
      { role: 'assistant', content: null, tool_calls: [bash('b', 'pwd')] },
      { role: 'assistant', content: null, reasoning_content: 'alone' },
      { role: 'assistant', content: 'after' },
      { role: 'assistant', tool_calls: [bash('c', 'id')] },
      { role: 'user', content: null },
    ];
    const items = fromChatCompletions(messages);
    expect(items.map((item) => item.type)).toStrictEqual([
      'function_call',
      'message',
      'function_call',
      'reasoning',
      'message',
      'message',
      'message',
      'function_call',
      'message',
    ]);
    expect(toChatCompletions(items)).toStrictEqual(messages);
  });

  it('converts orphans as they are: a call without output, an output without call', () => {
    const items = [functionCallOutput('ghost', 'late'), functionCall('lost', 'ls', {})];
    const messages = toChatCompletions(items);
    expect(messages).toStrictEqual([
      { role: 'tool', tool_call_id: 'ghost', content: 'late' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'lost', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
    ]);
    expect(fromChatCompletions(messages)).toStrictEqual(items);
  });

  it('leaves out item types Chat cannot hold, and keeps messages no item can hold verbatim', () => {
    const items: MemoryItem[] = [userMessage('a'), { type: 'web_search_call', id: 'ws', status: 'completed' }, userMessage('b')];
    expect(toChatCompletions(items)).toStrictEqual([
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
    ]);
    const odd = [{ role: 'user', content: 'x', type: 'custom' }, { role: 'user', content: 42 }] as unknown as ChatMessage[];
    const wrapped = fromChatCompletions(odd);
    expect(wrapped).toStrictEqual([
      { type: 'chat_message', message: odd[0] },
      { type: 'chat_message', message: odd[1] },
    ]);
    expect(toChatCompletions(wrapped)).toStrictEqual(odd);
  });

  it('keeps calls that are not plain function calls on the assistant message', () => {
    const messages: ChatMessage[] = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [bash('a', 'ls'), { id: 'b', type: 'custom', custom: { name: 'patch', input: '***' } }],
      },
    ];
    const items = fromChatCompletions(messages);
    expect(items).toStrictEqual([{ type: 'message', role: 'assistant', content: '', empty_content: 'null', tool_calls: messages[0]?.tool_calls }]);
    expect(toChatCompletions(items)).toStrictEqual(messages);
  });

  it('strict mode sends only what the API defines', () => {
    const items: MemoryItem[] = [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }], extra: 1 },
      assistantMessage('', [{ id: 'f', name: 'ls', arguments: '{}' }]),
      { type: 'function_call_output', call_id: 'f', output: 'x', extra: { returncode: 0 } },
      functionCall('g', 'pwd', {}),
      { type: 'message', role: 'exit', content: 'bye' },
    ];
    expect(toChatCompletions(items, { strict: true })).toStrictEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: '', tool_calls: [{ id: 'f', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'f', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'g', type: 'function', function: { name: 'pwd', arguments: '{}' } }] },
    ]);
  });
});

describe('fromAnthropicMessages / toAnthropicMessages', () => {
  const conversation: AnthropicConversation = {
    system: 'You are a coding agent.',
    messages: [
      { role: 'user', content: 'Why does the test fail?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Run the tests and look at the diff.', signature: 'sig-1' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'npm test' } },
          { type: 'tool_use', id: 'toolu_2', name: 'bash', input: { command: 'git diff' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '1 failing', is_error: true },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'diff --git' }] },
        ],
      },
      { role: 'assistant', content: 'The assertion is stale.' },
    ],
  };

  it('imports tool_use, tool_result and thinking blocks as items, signature kept', () => {
    expect(fromAnthropicMessages(conversation)).toStrictEqual([
      systemMessage('You are a coding agent.'),
      userMessage('Why does the test fail?'),
      { ...thought('reasoning_1_0', 'Run the tests and look at the diff.'), signature: 'sig-1' },
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Checking.' }] },
      functionCall('toolu_1', 'bash', { command: 'npm test' }),
      functionCall('toolu_2', 'bash', { command: 'git diff' }),
      { ...functionCallOutput('toolu_1', '1 failing'), is_error: true },
      { type: 'function_call_output', call_id: 'toolu_2', output: [{ type: 'text', text: 'diff --git' }] },
      assistantMessage('The assertion is stale.'),
    ]);
  });

  it('exports the imported conversation deep-equal', () => {
    expect(toAnthropicMessages(fromAnthropicMessages(conversation))).toStrictEqual(conversation);
  });

  it('exports memory with the system prompt apart, alternating turns and tool results in user turns', () => {
    const items: MemoryItem[] = [
      systemMessage('sys'),
      userMessage('go'),
      { ...thought('r', 'plan'), signature: 's' },
      assistantMessage('Looking.'),
      functionCall('a', 'ls', {}),
      functionCall('b', 'cat', { path: 'x' }),
      functionCallOutput('a', 'x'),
      functionCallOutput('b', 'hello'),
      userMessage('and now?'),
      assistantMessage('done'),
    ];
    expect(toAnthropicMessages(items)).toStrictEqual({
      system: 'sys',
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'plan', signature: 's' },
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', id: 'a', name: 'ls', input: {} },
            { type: 'tool_use', id: 'b', name: 'cat', input: { path: 'x' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'a', content: 'x' },
            { type: 'tool_result', tool_use_id: 'b', content: 'hello' },
            { type: 'text', text: 'and now?' },
          ],
        },
        { role: 'assistant', content: 'done' },
      ],
    });
  });

  it('merges consecutive same-role messages into one turn and gathers every system or developer message', () => {
    const result = toAnthropicMessages([
      systemMessage('one'),
      userMessage('a'),
      { type: 'message', role: 'developer', content: 'two' },
      userMessage('b'),
    ]);
    expect(result).toStrictEqual({
      system: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }],
    });
  });

  it('round-trips redacted thinking, and absent tool_result content', () => {
    const conv: AnthropicConversation = {
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: [
            { type: 'redacted_thinking', data: 'ENCRYPTED' },
            { type: 'tool_use', id: 't', name: 'noop', input: {} },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] },
      ],
    };
    const items = fromAnthropicMessages(conv);
    expect(items[1]).toStrictEqual({ type: 'reasoning', id: 'reasoning_1_0', encrypted_content: 'ENCRYPTED' });
    expect(items[3]).toStrictEqual({ type: 'function_call_output', call_id: 't', output: '', empty_content: 'omitted' });
    expect(toAnthropicMessages(items)).toStrictEqual(conv);
  });

  it('keeps turn-level extra keys, unknown blocks and unknown roles in the lossless mode', () => {
    const conv = {
      messages: [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'late' }], id: 'msg_1' },
        { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srv', name: 'web_search', input: {} }] },
        { role: 'exit', content: 'bye' },
        { role: 'system', content: 'not a real turn' },
      ],
    } as AnthropicConversation;
    const items = fromAnthropicMessages(conv);
    expect(items[0]).toStrictEqual({ type: 'message', role: 'user', content: [], id: 'msg_1' });
    expect(items.at(-1)).toStrictEqual({ type: 'anthropic_message', message: { role: 'system', content: 'not a real turn' } });
    expect(toAnthropicMessages(items)).toStrictEqual(conv);
    expect(toAnthropicMessages(items, { strict: true }).messages).toStrictEqual([
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'late' }] },
      { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srv', name: 'web_search', input: {} }] },
    ]);
  });

  it('converts orphans as they are and leaves out types it cannot hold', () => {
    const items: MemoryItem[] = [
      functionCallOutput('ghost', 'late'),
      { type: 'web_search_call', id: 'ws' },
      functionCall('lost', 'ls', {}),
    ];
    const result = toAnthropicMessages(items);
    expect(result).toStrictEqual({
      messages: [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'ghost', content: 'late' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'lost', name: 'ls', input: {} }] },
      ],
    });
    expect(fromAnthropicMessages(result)).toStrictEqual([functionCallOutput('ghost', 'late'), functionCall('lost', 'ls', {})]);
  });

  it('exports memory imported from Chat: nested tool_calls become tool_use, arguments become input', () => {
    const items = fromChatCompletions([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', reasoning_content: 'plan', tool_calls: [bash('c1', 'ls')] },
      { role: 'tool', tool_call_id: 'c1', content: 'a.ts' },
    ]);
    expect(toAnthropicMessages(items, { strict: true })).toStrictEqual({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'bash', input: { command: 'ls' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'a.ts' }] },
      ],
    });
    // Lossless mode keeps the unsigned thinking and the empty text.
    expect(toAnthropicMessages(items).messages[1]).toStrictEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'plan' },
        { type: 'text', text: '' },
        { type: 'tool_use', id: 'c1', name: 'bash', input: { command: 'ls' } },
      ],
    });
    // Chat-style tool calls stored on a message are exported too; unparsable arguments give an empty input.
    expect(toAnthropicMessages([assistantMessage('x', [{ id: 'f', name: 'ls', arguments: 'not json' }])]).messages).toStrictEqual([
      { role: 'assistant', content: [{ type: 'text', text: 'x' }, { type: 'tool_use', id: 'f', name: 'ls', input: {} }] },
    ]);
  });

  it('strict mode converts Responses parts to Anthropic blocks and drops empty text', () => {
    const items: MemoryItem[] = [
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'look' },
          { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
          { type: 'output_text', text: '' },
        ],
      },
    ];
    expect(toAnthropicMessages(items, { strict: true }).messages).toStrictEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
        ],
      },
    ]);
    // A reasoning item trimmed by Tier-2 keeps its signature key, but the placeholder is not what was signed.
    const trimmed: MemoryItem = { type: 'reasoning', id: 'r', signature: 'sig', output: '[reasoning cleared]' };
    expect(toAnthropicMessages([userMessage('q'), trimmed, assistantMessage('a')]).messages[1]?.content).toStrictEqual([
      { type: 'thinking', thinking: '[reasoning cleared]' },
      { type: 'text', text: 'a' },
    ]);
    expect(toAnthropicMessages([userMessage('q'), trimmed, assistantMessage('a')], { strict: true }).messages[1]?.content).toBe('a');
    expect(toAnthropicMessages([userMessage('q'), reasoning('r', 'no signature'), assistantMessage('a')], { reasoning: 'omit' }).messages[1]).toStrictEqual({
      role: 'assistant',
      content: 'a',
    });
  });
});
