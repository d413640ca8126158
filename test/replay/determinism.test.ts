// The determinism holes, each with a regression test: key order, settings a re-run needs, vetoed compactions, components by name.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  Agents,
  LIBRARY_VERSION,
  LlmCompactPolicy,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  TypeAwareContextProjector,
  approxTokenizer,
  compactPolicyFromDescription,
  contextProjectorFromDescription,
  functionCall,
  isUnknownComponentError,
  itemTokenCount,
  openAiTokenizer,
  openMemoryLog,
  replaySession,
  type ContextProjector,
  type MemoryItem,
  type ModelResult,
} from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';
import { echo, final, readAll } from './support.js';

describe('key order', () => {
  it('an item counts the same tokens whatever the order of its keys', () => {
    const a: MemoryItem = { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'weather in Paris today' } };
    const b: MemoryItem = { action: { query: 'weather in Paris today', type: 'search' }, status: 'completed', id: 'ws_1', type: 'web_search_call' };
    const tokenizer = openAiTokenizer();
    expect(itemTokenCount(a, tokenizer)).toBe(itemTokenCount(b, tokenizer));
    const part = (input: object): MemoryItem => ({ type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'n', input }] });
    expect(itemTokenCount(part({ z: 1, a: 2 }), tokenizer)).toBe(itemTokenCount(part({ a: 2, z: 1 }), tokenizer));
  });

  it('a runtime session with Responses items of unsorted keys passes checkSessionLaws and replays identically', async () => {
    const webSearch = (i: number): MemoryItem => ({ type: 'web_search_call', status: 'completed', id: `ws_${i}`, action: { type: 'search', query: `query ${i} about the weather` } });
    const answers: ModelResult[] = [];
    for (let i = 0; i < 40; i++) {
      answers.push({ items: [...(i % 3 === 0 ? [webSearch(i)] : []), functionCall(`c${i}`, 'echo', { text: `t${i}` })] });
    }
    answers.push(final('done'));
    const log = await openMemoryLog();
    const agent = Agents.react({
      modelClient: new ScriptedModelClient(answers),
      model: 'm',
      tools: [echo],
      log,
      contextProjector: new TypeAwareContextProjector({ tokenizer: openAiTokenizer() }),
      contextBudget: { maxTokens: 600, maxRecentToolResults: 4 },
      ids: (() => {
        let n = 0;
        return () => `k${++n}`;
      })(),
    });
    const session = await agent.newSession();
    await session.run('search');
    const events = await readAll(log, session.id);
    expect(checkSessionLaws(events)).toEqual([]);
    expect(await replaySession(log, session.id)).toMatchObject({ identical: true });
    await log.close();
  });
});

describe('what a re-run needs is recorded', () => {
  it('run.started records library version, model, base system prompt, maxSteps, CodeAct time limit and checkpointEvery', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(LIBRARY_VERSION).toBe(pkg.version);
    const log = await openMemoryLog();
    const agent = Agents.codeAct({ modelClient: new ScriptedModelClient([final('ok')]), model: 'm', systemPrompt: 'Base.', log, maxSteps: 7, codeTimeoutMs: 1234, checkpointEvery: 500 });
    const session = await agent.newSession();
    await session.run('x');
    const events = await readAll(log, session.id);
    expect(events.find((e) => e.type === 'run.started')).toMatchObject({
      v: 2,
      runtime: 'codeAct',
      settings: { libraryVersion: LIBRARY_VERSION, model: 'm', systemPrompt: 'Base.', maxSteps: 7, codeTimeoutMs: 1234, checkpointEvery: 500 },
    });
    await log.close();
  });

  it('the summarizer system prompt is in LlmCompactPolicy.describe(), and the policy is rebuilt from it', () => {
    const summarizer = new ScriptedModelClient([]);
    const policy = new LlmCompactPolicy(summarizer, 'sum', 5, { compactAbove: 9, systemPrompt: 'Summarise tersely.' });
    const description = policy.describe();
    expect(description.settings['systemPrompt']).toBe('Summarise tersely.');
    const rebuilt = compactPolicyFromDescription(description, { summarizer });
    expect(rebuilt).toBeInstanceOf(LlmCompactPolicy);
    expect(rebuilt.describe!()).toEqual(description);
    expect(() => compactPolicyFromDescription(description)).toThrow(/needs a summarizer/);
  });

  it('compactPolicyFromDescription rebuilds the structured policy with its projector', () => {
    const policy = new StructuredSummaryCompactPolicy({ maxItems: 6, pinnedPrefixItems: 1 }, new TypeAwareContextProjector({ tokenizer: openAiTokenizer('cl100k_base') }), { compactAbove: 11, maxSummaryChars: 500 });
    expect(compactPolicyFromDescription(policy.describe()).describe!()).toEqual(policy.describe());
  });
});

describe('components by recorded name (registry)', () => {
  const words = { name: 'words', count: (text: string) => text.split(/\s+/).filter(Boolean).length };
  class KeepLast implements ContextProjector {
    constructor(readonly n: number) {}
    project(items: readonly MemoryItem[]) {
      const kept = items.slice(-this.n);
      return new TypeAwareContextProjector({ tokenizer: approxTokenizer }).project(kept);
    }
    describe() {
      return { name: 'KeepLast', settings: { n: this.n, tokenizer: 'words' } };
    }
  }

  it('an unknown projector, tokenizer or policy is an error naming it; registered ones are rebuilt', () => {
    const unknown = (f: () => unknown): unknown => {
      try {
        f();
      } catch (e) {
        return e;
      }
      return undefined;
    };
    const projectorError = unknown(() => contextProjectorFromDescription({ name: 'KeepLast', settings: { n: 2 } }));
    expect(isUnknownComponentError(projectorError) && projectorError.message).toContain('"KeepLast"');
    expect(String(unknown(() => contextProjectorFromDescription({ name: 'DefaultContextProjector', settings: { tokenizer: 'words' } })))).toContain('"words"');
    expect(String(unknown(() => compactPolicyFromDescription({ name: 'MyPolicy', settings: {} })))).toContain('unknown policy: "MyPolicy"');
    const registry = {
      tokenizers: { words },
      projectors: { KeepLast: (settings: Record<string, unknown>) => new KeepLast(settings['n'] as number) },
      policies: { MyPolicy: () => new StructuredSummaryCompactPolicy({ maxItems: 3 }) },
    };
    expect(contextProjectorFromDescription({ name: 'KeepLast', settings: { n: 2, tokenizer: 'words' } }, registry)).toBeInstanceOf(KeepLast);
    expect(contextProjectorFromDescription({ name: 'DefaultContextProjector', settings: { tokenizer: 'words' } }, registry).describe().settings['tokenizer']).toBe('words');
    expect(compactPolicyFromDescription({ name: 'MyPolicy', settings: {} }, { registry })).toBeInstanceOf(StructuredSummaryCompactPolicy);
  });

  it('replaySession rebuilds a custom projector by name from the registry', async () => {
    const log = await openMemoryLog();
    const agent = Agents.react({ modelClient: new ScriptedModelClient([final('a')]), model: 'm', log, contextProjector: new KeepLast(1) });
    const session = await agent.newSession();
    await session.run('hello');
    await expect(replaySession(log, session.id)).rejects.toThrow('unknown tokenizer: "words"');
    expect(
      await replaySession(log, session.id, { registry: { tokenizers: { words }, projectors: { KeepLast: (s) => new KeepLast(s['n'] as number) } } }),
    ).toMatchObject({ identical: true, steps: 1 });
    await log.close();
  });
});
