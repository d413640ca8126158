// Regressions: content-free summarizer answers (null, [], "", zero-width) and the one-request goal rule with later user turns.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LlmCompactPolicy, isContentFree } from '../../src/compact/index.js';
import { assistantMessage, userMessage, type MemoryItem } from '../../src/items/index.js';
import { ScriptedModelClient, type ModelResult } from '../../src/model/index.js';
import { openMemoryLog } from '../../src/log/index.js';
import { openSession } from '../../src/session/index.js';

const answer = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
const items = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? userMessage(`request ${i}`) : assistantMessage(`answer ${i}`)));

describe('content-free summarizer answers', () => {
  for (const empty of ['null', '[]', '""', '" "', '\u200b', '\u200b\ufeff\u2060 \n', '[null, "", {}]', '{"goal": "\u200b"}', '```json\nnull\n```', '{"completed": [[]]}']) {
    it(`${JSON.stringify(empty)} is a failure and memory stays`, async () => {
      expect(isContentFree(empty)).toBe(true);

      const policy = new LlmCompactPolicy(new ScriptedModelClient([answer(empty)]), 'm', 2);
      await expect(policy.compact({ items, summary: 'the previous summary' })).rejects.toThrow(/no content|empty summary/);
      const log = await openMemoryLog();
      const session = await openSession(log, { id: 's' });
      await session.memory.record([{ type: 'user.input', items }]);
      await session.memory.setSummary('the previous summary');
      const before = session.memory.state();
      await expect(session.compact(new LlmCompactPolicy(new ScriptedModelClient([answer(empty)]), 'm', 2))).rejects.toThrow();
      expect(session.memory.state()).toBe(before);
      const types: string[] = [];
      for await (const e of log.read('s')) types.push(e.type);
      expect(types.at(-1)).toBe('compaction.failed');
    });
  }

  it('text, numbers and false are content', () => {
    for (const text of ['ok', '0', 'false', '"a"', '["x"]', '{"goal": "g"}', 'prose {}']) expect(isContentFree(text)).toBe(false);
  });

  it('property: any answer built only of empty values and invisible characters is content-free and gives a failure', async () => {
    const invisible = fc.constantFrom('', ' ', '\n', '\t', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00a0', '\u3000', '\u180e', '\u2028');
    const pad = fc.array(invisible, { maxLength: 4 }).map((xs) => xs.join(''));
    const empty: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constant(null),
        pad,
        fc.array(tie('v'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('goal', 'completed', 'pending', 'x'), tie('v'), { maxKeys: 3 }),
      ),
    })).v;
    await fc.assert(
      fc.asyncProperty(empty, pad, pad, async (value, before, after) => {
        const text = `${before}${JSON.stringify(value)}${after}`;
        expect(isContentFree(text)).toBe(true);
        const policy = new LlmCompactPolicy(new ScriptedModelClient([answer(text)]), 'm', 2);
        await expect(policy.compact({ items, summary: null })).rejects.toThrow();
      }),
      { numRuns: 60 },
    );
  });
});

describe('the one-request rule only applies without later user turns', () => {
  it('12 items, user turns at 0, 3, 6, 9, maxItems 10: the model goal stays and the cut is a user turn', async () => {
    const turns: MemoryItem[] = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? userMessage(`u${i}`) : assistantMessage(`a${i}`)));
    const result = await new LlmCompactPolicy(new ScriptedModelClient([answer('{"goal":"g","pending":"one"}')]), 'm', 10).compact({ items: turns, summary: null });
    expect(result.summary).toBe('## Goal\ng\n\n## Pending\n- one');
    expect(result.goal).toBe('g');
    expect(result.memory?.items[0]).toBe(turns[3]);
  });
});
