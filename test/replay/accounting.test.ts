// Cost and prompt-cache accounting in the audit: usage by stable names, prices, compactions apart, the cacheable prefix.
import { describe, expect, it } from 'vitest';
import {
  Agents,
  LlmCompactPolicy,
  ScriptedModelClient,
  approxTokenizer,
  auditSession,
  canonicalJson,
  costOf,
  isInvalidOptionsError,
  itemTokenCount,
  openMemoryLog,
  parsePriceTable,
  priceOf,
  replayContext,
  usageFigures,
  type ModelResult,
  type SessionEventLog,
} from '../../src/index.js';
import { callTool, echo, final, readAll } from './support.js';

const usage = (inputTokens: number, cachedInputTokens: number) => ({ inputTokens, outputTokens: 10, totalTokens: inputTokens + 10, cachedInputTokens });
const withUsage = (result: ModelResult, u: Record<string, unknown>): ModelResult => ({ ...result, usage: u });

const prices = {
  'gpt-test': { input: 2, output: 8, cachedInput: 0.5 },
  'sum-*': { input: 1, output: 4 },
};

const record = async (log: SessionEventLog, options: { compact?: boolean } = {}): Promise<string> => {
  const turns = [
    withUsage(callTool('c1', 'echo', { text: 'one' }), usage(1000, 0)),
    withUsage(callTool('c2', 'echo', { text: 'two' }), usage(1200, 1000)),
    withUsage(callTool('c3', 'echo', { text: 'fail three' }), usage(1400, 1200)),
    withUsage(final('done'), usage(1600, 1400)),
  ];
  const summarizer = new ScriptedModelClient([
    { outputText: JSON.stringify({ goal: 'echo', completed: ['one'] }), items: [], usage: { inputTokens: 3000, outputTokens: 200 } },
  ]);
  const agent = Agents.react({
    modelClient: new ScriptedModelClient(turns),
    model: 'gpt-test',
    systemPrompt: 'You echo.',
    tools: [echo],
    log,
    ...(options.compact ? { compactPolicy: new LlmCompactPolicy(summarizer, 'sum-model', 2, { compactAbove: 5 }) } : {}),
  });
  const session = await agent.newSession();
  await session.run('echo three things');
  return session.id;
};

describe('usageFigures', () => {
  it('reads the stable names, and the providers own fields in raw for usage recorded before them', () => {
    expect(usageFigures({ inputTokens: 100, outputTokens: 5, cachedInputTokens: 60, cacheWriteTokens: 10 })).toEqual({
      inputTokens: 100, outputTokens: 5, cachedInputTokens: 60, cacheWriteTokens: 10, cacheReported: true,
    });
    expect(usageFigures({ inputTokens: 100, outputTokens: 5, raw: { prompt_tokens_details: { cached_tokens: 64 } } })?.cachedInputTokens).toBe(64);
    expect(usageFigures({ inputTokens: 100, outputTokens: 5, raw: { input_tokens_details: { cached_tokens: 32 } } })?.cachedInputTokens).toBe(32);
    expect(usageFigures({ inputTokens: 130, outputTokens: 5, raw: { cache_read_input_tokens: 100, cache_creation_input_tokens: 20 } })).toMatchObject({
      cachedInputTokens: 100, cacheWriteTokens: 20, cacheReported: true,
    });
    expect(usageFigures({ inputTokens: 100, outputTokens: 5 })).toMatchObject({ cachedInputTokens: 0, cacheReported: false });
    // The AI SDK's usage, as its bridge records it (v6 details).
    expect(usageFigures({ inputTokens: 100, outputTokens: 5, inputTokenDetails: { noCacheTokens: 30, cacheReadTokens: 50, cacheWriteTokens: 20 } })).toMatchObject({
      cachedInputTokens: 50, cacheWriteTokens: 20, cacheReported: true,
    });
    expect(usageFigures({ totalTokens: 5 })).toBeUndefined();
    expect(usageFigures({ inputTokens: -3, outputTokens: Number.NaN })).toBeUndefined();
    expect(usageFigures('garbage')).toBeUndefined();
  });
});

describe('prices', () => {
  it('prices cached and cache-write input apart, per million tokens', () => {
    const figures = { inputTokens: 1_000_000, outputTokens: 100_000, cachedInputTokens: 600_000, cacheWriteTokens: 100_000, cacheReported: true };
    // 300k uncached at 3, 600k cached at 0.3, 100k written at 3.75, 100k out at 15
    expect(costOf(figures, { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 })).toBeCloseTo(0.9 + 0.18 + 0.375 + 1.5, 10);
    // without cache prices, cached and written input cost what input costs
    expect(costOf(figures, { input: 3, output: 15 })).toBeCloseTo(3 + 1.5, 10);
  });

  it('finds a model by its own key, else by the longest prefix* key', () => {
    const table = { 'claude-*': { input: 1, output: 1 }, 'claude-sonnet-*': { input: 3, output: 15 }, 'gpt-4.1': { input: 2, output: 8 } };
    expect(priceOf(table, 'claude-sonnet-4-5')?.input).toBe(3);
    expect(priceOf(table, 'claude-haiku')?.input).toBe(1);
    expect(priceOf(table, 'gpt-4.1')?.input).toBe(2);
    expect(priceOf(table, 'gpt-4.1-mini')).toBeUndefined();
    expect(priceOf(table, 'toString')).toBeUndefined();
  });

  it('rejects a bad table, naming the model and field', () => {
    const error = (() => {
      try {
        parsePriceTable({ 'gpt-4.1': { input: -1, output: 8 } });
      } catch (e) {
        return e;
      }
    })();
    expect(isInvalidOptionsError(error)).toBe(true);
    expect((error as Error).message).toContain('gpt-4.1.input');
    expect(() => parsePriceTable({ m: { input: 1, output: 1, cached: 1 } })).toThrow(/cached/);
    expect(() => parsePriceTable([1])).toThrow(/prices/);
  });
});

describe('the audit with prices', () => {
  it('gives each step its usage, cost and cacheable prefix, and totals that add up', async () => {
    const log = await openMemoryLog();
    const id = await record(log);
    const audit = await auditSession(log, id, { prices });
    expect(audit.steps).toHaveLength(4);
    const [first, second] = audit.steps;
    expect(first?.account?.usage).toMatchObject({ inputTokens: 1000, outputTokens: 10, cachedInputTokens: 0 });
    expect(first?.account?.cost).toBeCloseTo((1000 * 2 + 10 * 8) / 1e6, 12);
    expect(second?.account?.cost).toBeCloseTo((200 * 2 + 1000 * 0.5 + 10 * 8) / 1e6, 12);
    expect(second?.account?.measuredCacheShare).toBeCloseTo(1000 / 1200, 12);

    // The first request has no predecessor; the second repeats the first's system prompt, tools and items.
    expect(first?.account?.cacheablePrefix).toMatchObject({ tokens: 0, items: 0 });
    const events = await readAll(log, id);
    const requested = events.find((e) => e.type === 'model.requested');
    if (requested?.type !== 'model.requested') throw new Error('no model.requested');
    const step1 = await replayContext(log, id, { step: 1 });
    const step2 = await replayContext(log, id, { step: 2 });
    const promptTokens = approxTokenizer.count('You echo.') + approxTokenizer.count(canonicalJson(requested.tools ?? []));
    const itemsTokens = (items: readonly unknown[]) => items.reduce<number>((n, item) => n + itemTokenCount(item as never, approxTokenizer), 0);
    expect(second?.account?.cacheablePrefix).toEqual({
      tokens: promptTokens + itemsTokens(step1.items),
      requestTokens: promptTokens + itemsTokens(step2.items),
      share: (promptTokens + itemsTokens(step1.items)) / (promptTokens + itemsTokens(step2.items)),
      items: step1.items.length,
    });

    // The estimate: our own counts priced as if the provider cached exactly the prefix.
    const answer = events.filter((e) => e.type === 'model.responded')[1];
    const outputTokens = answer?.type === 'model.responded' ? itemsTokens(answer.items) : -1;
    const prefix = second!.account!.cacheablePrefix!;
    expect(second?.account?.estimate).toEqual({
      inputTokens: prefix.requestTokens,
      cachedInputTokens: prefix.tokens,
      outputTokens,
      cost: ((prefix.requestTokens - prefix.tokens) * 2 + prefix.tokens * 0.5 + outputTokens * 8) / 1e6,
    });

    const t = audit.account;
    expect(t.estimate.cost).toBeCloseTo(audit.steps.reduce((n, s) => n + (s.account?.estimate?.cost ?? 0), 0), 12);
    expect(t.steps).toMatchObject({ calls: 4, inputTokens: 5200, outputTokens: 40, cachedInputTokens: 3600, cacheWriteTokens: 0 });
    expect(t.steps.cost).toBeCloseTo(audit.steps.reduce((n, s) => n + (s.account?.cost ?? 0), 0), 12);
    expect(t.compactions).toMatchObject({ calls: 0, cost: 0 });
    expect(t.cost).toBeCloseTo(t.steps.cost ?? Number.NaN, 12);
    expect(t.unpricedModels).toEqual([]);
    expect(t.measuredCache).toEqual({ cachedInputTokens: 3600, inputTokens: 5200, share: 3600 / 5200 });
    const prefixSum = audit.steps.reduce((n, s) => n + (s.account?.cacheablePrefix?.tokens ?? 0), 0);
    expect(t.cacheablePrefix.tokens).toBe(prefixSum);
    expect(t.cacheablePrefix.share).toBeGreaterThan(0.5);
    await log.close();
  });

  it("counts a compaction's own model calls apart, priced by the policy's model", async () => {
    const log = await openMemoryLog();
    const id = await record(log, { compact: true });
    const audit = await auditSession(log, id, { prices });
    expect(audit.compactions).toHaveLength(1);
    const [compaction] = audit.compactions;
    expect(compaction?.account).toEqual({
      model: 'sum-model',
      usage: { inputTokens: 3000, outputTokens: 200, cachedInputTokens: 0, cacheWriteTokens: 0, cacheReported: false },
      cost: (3000 * 1 + 200 * 4) / 1e6,
    });
    expect(audit.account.compactions).toMatchObject({ calls: 1, inputTokens: 3000, outputTokens: 200 });
    expect(audit.account.cost).toBeCloseTo((audit.account.steps.cost ?? 0) + (3000 + 800) / 1e6, 12);
    // The compaction replaced the start of memory with a summary: the next request shares only system prompt and tools.
    const after = audit.steps.find((s) => s.step === (compaction?.step ?? 0));
    expect(after?.account?.cacheablePrefix?.items).toBe(0);
    await log.close();
  });

  it('without prices: usage and prefix, no cost; a model missing from the table is named', async () => {
    const log = await openMemoryLog();
    const id = await record(log);
    const plain = await auditSession(log, id);
    expect(plain.steps[0]?.account).not.toHaveProperty('cost');
    expect(plain.account).not.toHaveProperty('cost');
    expect(plain.account.steps).not.toHaveProperty('cost');
    const partial = await auditSession(log, id, { prices: { other: { input: 1, output: 1 } } });
    expect(partial.account.unpricedModels).toEqual(['gpt-test']);
    expect(partial.account.cost).toBe(0);
    expect(partial.steps[0]?.account).not.toHaveProperty('cost');
    await expect(auditSession(log, id, { prices: { m: { input: 'cheap' } } as never })).rejects.toThrow(/m\.input/);
    await log.close();
  });

  it('names every called model without a price, also when the cost is only estimated from our counts', async () => {
    // No usage anywhere: the only cost is the estimate, and the unpriced model must still be named (it was left out of it).
    const log = await openMemoryLog();
    const summarizer = new ScriptedModelClient([{ outputText: JSON.stringify({ goal: 'echo' }), items: [] }]);
    const agent = Agents.react({
      modelClient: new ScriptedModelClient([callTool('c1', 'echo', { text: 'one' }), callTool('c2', 'echo', { text: 'two' }), callTool('c3', 'echo', { text: 'three' }), final('done')]),
      model: 'gpt-test',
      systemPrompt: 'You echo.',
      tools: [echo],
      log,
      compactPolicy: new LlmCompactPolicy(summarizer, 'sum-model', 2, { compactAbove: 5 }),
    });
    const session = await agent.newSession();
    await session.run('echo three things');
    const audit = await auditSession(log, session.id, { prices: { 'gpt-x': { input: 3, output: 15 } } });
    expect(audit.compactions.length).toBeGreaterThan(0);
    expect(audit.account.steps.calls).toBe(0);
    expect(audit.account.unpricedModels).toEqual(['gpt-test', 'sum-model']);
    expect(audit.account.estimate.cost).toBe(0);
    expect(audit.steps[0]?.account?.estimate).not.toHaveProperty('cost');
    // Priced, the step model leaves the list and the estimate has a cost; the summarizer stays unpriced.
    const priced = await auditSession(log, session.id, { prices: { 'gpt-test': { input: 3, output: 15 } } });
    expect(priced.account.unpricedModels).toEqual(['sum-model']);
    expect(priced.account.estimate.cost).toBeGreaterThan(0);
    // Without a table nothing is unpriced: there was nothing to price against.
    expect((await auditSession(log, session.id)).account.unpricedModels).toEqual([]);
    await log.close();
  });

  it('a step range reports the same figures for its steps as the whole audit', async () => {
    const log = await openMemoryLog();
    const id = await record(log);
    const whole = await auditSession(log, id, { prices });
    const part = await auditSession(log, id, { prices, fromStep: 3, toStep: 3 });
    expect(part.steps.map((s) => s.account)).toEqual([whole.steps[2]?.account]);
    await log.close();
  });
});

describe('the cacheable prefix and evictionStep', () => {
  it('a coarser eviction step keeps more of each request equal to the one before', async () => {
    const shareWith = async (evictionStep: number): Promise<number> => {
      const log = await openMemoryLog();
      const turns = Array.from({ length: 24 }, (_, i) => callTool(`c${i}`, 'echo', { text: `${i} ${'x'.repeat(200)}` }));
      const agent = Agents.react({
        modelClient: new ScriptedModelClient([...turns, final('done')]),
        model: 'gpt-test',
        systemPrompt: 'You echo.',
        tools: [echo],
        log,
        contextBudget: { maxItems: 16, pinnedPrefixItems: 1, evictionStep },
        maxSteps: 30,
      });
      const session = await agent.newSession();
      await session.run('echo a lot');
      const { account } = await auditSession(log, session.id);
      await log.close();
      return account.cacheablePrefix.share;
    };
    const one = await shareWith(1);
    const eight = await shareWith(8);
    expect(one).toBeGreaterThan(0);
    expect(eight).toBeGreaterThan(one);
  });
});
