// Both bridges' projection paths with a call that has several results: no result reaches the model without its call.
import type { AgentInputItem } from '@openai/agents';
import * as aiTest from 'ai/test';
import { describe, expect, it } from 'vitest';
import { openMemoryLog } from '../../src/index.js';
import { createAiSdkRecorder } from '../../src/bridges/ai-sdk/index.js';
import { openLedgerSession } from '../../src/bridges/openai-agents/index.js';
import { installedAiSdk } from '../support/ai-sdk-under-test.js';

const { MockModel } = installedAiSdk('ai', aiTest);

describe('a call with several results, through the bridges', () => {
  it('ai-sdk prepareStep: two tool-result parts for one call under maxItems 2 and maxTokens 1', async () => {
    for (const contextBudget of [{ maxItems: 2 }, { maxTokens: 1 }]) {
      const log = await openMemoryLog();
      const recorder = await createAiSdkRecorder(log, { sessionId: 'ai', contextBudget, ids: () => 'run-1' });
      const result = (value: string) => ({ type: 'tool-result', toolCallId: 'd', toolName: 'lookup', output: { type: 'text', value } });
      const messages = [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'd', toolName: 'lookup', input: { word: 'a' } }] },
        { role: 'tool', content: [result('first')] },
        { role: 'tool', content: [result('second')] },
      ];
      const { messages: sent } = (await recorder.prepareStep({ stepNumber: 0, model: new MockModel({ modelId: 'm' }), messages } as never)) as { messages: { role: string; content: unknown }[] };
      const parts = sent.flatMap((m) => (Array.isArray(m.content) ? (m.content as { type: string; toolCallId?: string }[]) : []));
      const calls = parts.filter((p) => p.type === 'tool-call').length;
      const results = parts.filter((p) => p.type === 'tool-result').length;
      expect({ budget: contextBudget, orphaned: results > 0 && calls === 0 }).toEqual({ budget: contextBudget, orphaned: false });
      if (contextBudget.maxTokens === 1) expect(results).toBe(2);
      await log.close();
    }
  });

  it('openai-agents callModelInputFilter: two function_call_result items for one call under maxItems 2 and maxTokens 1', async () => {
    for (const contextBudget of [{ maxItems: 2 }, { maxTokens: 1 }]) {
      const log = await openMemoryLog();
      const session = await openLedgerSession(log, { sessionId: 'agents', contextBudget });
      const items: AgentInputItem[] = [
        { role: 'user', content: 'go' },
        { type: 'function_call', callId: 'd', name: 'lookup', arguments: '{}' },
        { type: 'function_call_result', callId: 'd', name: 'lookup', status: 'completed', output: { type: 'text', text: 'first' } },
        { type: 'function_call_result', callId: 'd', name: 'lookup', status: 'completed', output: { type: 'text', text: 'second' } },
      ] as AgentInputItem[];
      await session.addItems(items);
      const filtered = await session.callModelInputFilter({ modelData: { input: items, instructions: 'x' }, agent: {} as never, context: undefined });
      const types = filtered.input.map((i) => (i as { type?: string }).type);
      const results = types.filter((t) => t === 'function_call_result').length;
      expect({ budget: contextBudget, orphaned: results > 0 && !types.includes('function_call') }).toEqual({ budget: contextBudget, orphaned: false });
      if (contextBudget.maxTokens === 1) expect(results).toBe(2);
      await log.close();
    }
  });
});
