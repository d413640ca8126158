// Malformed input to a bridge is refused by name (BridgeInputError, with the index and path of the bad element), never
// a raw TypeError, and nothing is recorded; a tool result without its call id is refused, never lost in silence.
import { HumanMessage } from '@langchain/core/messages';
import * as aiTest from 'ai/test';
import { describe, expect, it } from 'vitest';
import { createAiSdkRecorder, fromModelMessages, toModelMessages } from '../../src/bridges/ai-sdk/index.js';
import { fromBaseMessages, toBaseMessages } from '../../src/bridges/langchain/index.js';
import { fromAgentInputItems, openLedgerSession, toAgentInputItems } from '../../src/bridges/openai-agents/index.js';
import { isBridgeInputError, openMemoryLog } from '../../src/index.js';
import { installedAiSdk } from '../support/ai-sdk-under-test.js';

/** What `run` threw, as the fields a caller reads; `threw: false` when it did not throw. */
const refusal = async (run: () => unknown): Promise<unknown> => {
  try {
    await run();
    return { threw: false };
  } catch (e) {
    return isBridgeInputError(e) ? { code: e.code, bridge: e.bridge, operation: e.operation, index: e.index, path: e.path } : { threw: (e as Error).name, message: (e as Error).message };
  }
};

describe('converters refuse malformed input by name', () => {
  it.each([
    ['fromModelMessages([null])', () => fromModelMessages([null as never]), { bridge: 'ai-sdk', operation: 'fromModelMessages', index: 0, path: '[0]' }],
    ['fromModelMessages(null)', () => fromModelMessages(null as never), { bridge: 'ai-sdk', operation: 'fromModelMessages', index: undefined, path: '' }],
    [
      'fromModelMessages: a tool result without toolCallId',
      () => fromModelMessages([{ role: 'user', content: 'x' }, { role: 'tool', content: [{ type: 'tool-result', toolName: 't', output: { type: 'text', value: 'v' } }] } as never]),
      { bridge: 'ai-sdk', operation: 'fromModelMessages', index: 1, path: '[1].content[0].toolCallId' },
    ],
    ['fromModelMessages: a null part', () => fromModelMessages([{ role: 'assistant', content: [null] } as never]), { bridge: 'ai-sdk', operation: 'fromModelMessages', index: 0, path: '[0].content[0]' }],
    ['toModelMessages([null])', () => toModelMessages([null as never]), { bridge: 'ai-sdk', operation: 'toModelMessages', index: 0, path: '[0]' }],
    [
      'toModelMessages: a function_call_output without call_id (was left out in silence)',
      () => toModelMessages([{ type: 'function_call_output', output: 'lost' } as never]),
      { bridge: 'ai-sdk', operation: 'toModelMessages', index: 0, path: '[0].call_id' },
    ],
    ['fromAgentInputItems(null)', () => fromAgentInputItems(null as never), { bridge: 'openai-agents', operation: 'fromAgentInputItems', index: undefined, path: '' }],
    ['fromAgentInputItems([null])', () => fromAgentInputItems([null as never]), { bridge: 'openai-agents', operation: 'fromAgentInputItems', index: 0, path: '[0]' }],
    [
      'fromAgentInputItems: a function_call_result without callId',
      () => fromAgentInputItems([{ type: 'function_call_result', name: 't', status: 'completed', output: 'x' } as never]),
      { bridge: 'openai-agents', operation: 'fromAgentInputItems', index: 0, path: '[0].callId' },
    ],
    ['toAgentInputItems([null])', () => toAgentInputItems([null as never]), { bridge: 'openai-agents', operation: 'toAgentInputItems', index: 0, path: '[0]' }],
    ['fromBaseMessages([null])', () => fromBaseMessages([null as never]), { bridge: 'langchain', operation: 'fromBaseMessages', index: 0, path: '[0]' }],
    ['fromBaseMessages([message, {}])', () => fromBaseMessages([new HumanMessage('hi'), {} as never]), { bridge: 'langchain', operation: 'fromBaseMessages', index: 1, path: '[1]' }],
    ['toBaseMessages([null])', () => toBaseMessages([null as never]), { bridge: 'langchain', operation: 'toBaseMessages', index: 0, path: '[0]' }],
    ['toBaseMessages: a message with no content', () => toBaseMessages([{ type: 'message', role: 'user' } as never]), { bridge: 'langchain', operation: 'toBaseMessages', index: 0, path: '[0].content' }],
  ])('%s', async (_name, run, expected) => {
    expect(await refusal(run)).toEqual({ code: 'BRIDGE_INPUT', ...expected });
  });
});

describe('the recorder and the session refuse before recording anything', () => {
  it('prepareStep({ messages: [null] }) and a tool result with no id: BridgeInputError, nothing recorded', async () => {
    const log = await openMemoryLog();
    const recorder = await createAiSdkRecorder(log, { sessionId: 'ai', ids: () => 'run-1' });
    const head = await log.head('ai');
    // The mock of the installed major's spec (the SDK matrix runs this file with ai 5, 6 and 7).
    const { MockModel } = installedAiSdk('ai', aiTest as unknown as Record<string, unknown>);
    const model = new MockModel({ modelId: 'm' }) as never;
    expect(await refusal(() => recorder.prepareStep({ stepNumber: 0, model, messages: [null as never] }))).toEqual({
      code: 'BRIDGE_INPUT', bridge: 'ai-sdk', operation: 'prepareStep', index: 0, path: '[0]',
    });
    const noId = [{ role: 'user', content: 'go' }, { role: 'tool', content: [{ type: 'tool-result', toolName: 'lookup', output: { type: 'text', value: 'v' } }] }];
    expect(await refusal(() => recorder.prepareStep({ stepNumber: 0, model, messages: noId as never }))).toEqual({
      code: 'BRIDGE_INPUT', bridge: 'ai-sdk', operation: 'prepareStep', index: 1, path: '[1].content[0].toolCallId',
    });
    expect(await log.head('ai')).toBe(head);
    await log.close();
  });

  it('LedgerSession.addItems([null]) and a callModelInputFilter result without callId: BridgeInputError, nothing recorded, nothing lost', async () => {
    const log = await openMemoryLog();
    const session = await openLedgerSession(log, { sessionId: 'agents' });
    const head = await log.head('agents');
    expect(await refusal(() => session.addItems([null as never]))).toEqual({
      code: 'BRIDGE_INPUT', bridge: 'openai-agents', operation: 'LedgerSession.addItems', index: 0, path: '[0]',
    });
    for (const output of ['plain', { type: 'text', text: 'an object output' }]) {
      const input = [{ role: 'user', content: 'go' }, { type: 'function_call_result', name: 'lookup', status: 'completed', output }];
      expect(await refusal(() => session.callModelInputFilter({ modelData: { input: input as never, instructions: 'x' }, agent: {} as never, context: undefined }))).toEqual({
        code: 'BRIDGE_INPUT', bridge: 'openai-agents', operation: 'LedgerSession.callModelInputFilter', index: 1, path: '[1].callId',
      });
    }
    expect(await log.head('agents')).toBe(head);
    await log.close();
  });
});
