// Fault: an LLM summarizer answer that is JSON with nothing in it (`{}`, `{"goal": null}`) was applied as an empty summary.
import { describe, expect, it } from 'vitest';
import {
  Agents,
  LlmCompactPolicy,
  ScriptedModelClient,
  assistantMessage,
  openMemoryLog,
  userMessage,
  type ModelRequest,
  type ModelResult,
  type SessionEvent,
} from '../../src/index.js';

const answer = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
const items = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? userMessage(`request ${i}`) : assistantMessage(`answer ${i}`)));

describe('a content-free LLM summary is a failure', () => {
  for (const empty of ['{}', '{"goal": null}', '```json\n{"goal": "  ", "completed": []}\n```', '{"unrelated": "key"}']) {
    it(`${JSON.stringify(empty)} throws and names the answer`, async () => {
      const policy = new LlmCompactPolicy(new ScriptedModelClient([answer(empty)]), 'm', 2);
      await expect(policy.compact({ items, summary: 'the previous summary' })).rejects.toThrow(/the model's summary has no content/);
    });
  }

  it('an empty answer is still a failure; a JSON answer with content is applied', async () => {
    await expect(new LlmCompactPolicy(new ScriptedModelClient([answer('  ')]), 'm', 2).compact({ items })).rejects.toThrow(/empty summary/);
    const result = await new LlmCompactPolicy(new ScriptedModelClient([answer('{"goal": "ship it"}')]), 'm', 2).compact({ items });
    expect(result.summary).toBe('## Goal\nship it');
  });

  it('in a run: compaction.failed is recorded, memory and summary are kept, and compactAbove retries at the next step', async () => {
    const summarizer = new ScriptedModelClient([answer('{"goal": null}'), answer('{"goal": "the task", "completed": ["step one"]}')]);
    const log = await openMemoryLog();
    let n = 0;
    const model = new ScriptedModelClient([
      (r: ModelRequest) => ({ items: [{ type: 'function_call', call_id: 'c1', name: 'none', arguments: '{}' }], outputText: String(r.items.length) }),
      answer('done'),
    ]);
    const agent = Agents.react({ modelClient: model, model: 'm', log, ids: () => `e-${++n}`, compactPolicy: new LlmCompactPolicy(summarizer, 's', 2, { compactAbove: 6 }) });
    const session = await agent.newSession();
    await session.memory.record([{ type: 'user.input', items: items.slice(0, 7) }]);
    await session.memory.setSummary('the previous summary');
    const before = session.memory.getItems().length;
    await session.run('go on');
    const events: SessionEvent[] = [];
    for await (const e of log.read(session.id)) events.push(e);
    const failed = events.find((e) => e.type === 'compaction.failed');
    expect(failed).toMatchObject({ trigger: 'auto', stage: 'compact', step: 1, error: expect.stringContaining('no content') });
    // Step 1 was sent the whole memory with the old summary; step 2 compacted.
    expect(model.requests[0]!.items).toHaveLength(before + 1);
    expect(model.requests[0]!.items[0]).toMatchObject({ role: 'system', content: 'the previous summary' });
    const compacted = events.find((e) => e.type === 'memory.compacted');
    expect(compacted).toMatchObject({ step: 2, summary: expect.stringContaining('## Goal\nthe task') });
    expect(summarizer.requests).toHaveLength(2);
  });
});
