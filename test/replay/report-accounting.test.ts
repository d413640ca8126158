// The report's accounting lines: per step the cacheable prefix and cost the audit gives, and the summary line.
import { describe, expect, it } from 'vitest';
import { runDemoSession } from '../../src/cli/demo/coding-session.js';
import { Agents, ScriptedModelClient, assistantMessage } from '../../src/index.js';
import { openMemoryLog } from '../../src/log/index.js';
import { auditSession, renderReport, reportData } from '../../src/replay/index.js';

describe('the report with prices', () => {
  it('carries each step\'s cacheable prefix and (estimated) cost, as the audit gives them', async () => {
    const log = await openMemoryLog();
    await runDemoSession(log, { tasks: 1 });
    const prices = { 'scripted-coder': { input: 3, output: 15, cachedInput: 0.3 } };
    const data = await reportData(log, 'demo', undefined, { prices });
    const audit = await auditSession(log, 'demo', { prices });
    expect(data.accounting.steps).toHaveLength(data.steps.length);
    // The scripted demo reports no usage: the cost line is our estimate.
    expect(data.accounting.cost).toBe('estimated');
    expect(data.accounting.steps).toEqual(
      audit.steps.map((s) => [s.account?.cacheablePrefix?.tokens ?? null, s.account?.cacheablePrefix?.items ?? null, s.account?.estimate?.cost ?? null]),
    );
    expect(data.accounting.totals).toEqual(audit.account);
    const html = renderReport(data);
    expect(html).toContain(`cacheable prefix ${(audit.account.cacheablePrefix.share * 100).toFixed(1)}% of request tokens`);
    expect(html).toContain(`estimated cost $${(audit.account.estimate.cost ?? 0).toFixed(4)}`);
    expect(html).toContain('drawAccountLines();');
    const plain = await reportData(log, 'demo');
    expect(plain.accounting.cost).toBeNull();
    expect(renderReport(plain)).not.toContain('estimated cost');
    // A table without the demo's model: the summary says the figure leaves its calls out, instead of a bare $0.
    const unpriced = renderReport(await reportData(log, 'demo', undefined, { prices: { 'gpt-x': { input: 3, output: 15 } } }));
    expect(unpriced).toContain('estimated cost $0.0000 (if exactly the prefix were cached; leaves out the calls of scripted-coder: no price)');
    await log.close();
  });

  it('names an unpriced model as text, never as markup', async () => {
    const log = await openMemoryLog();
    const model = '<img src=x onerror=alert(1)>';
    const agent = Agents.react({ modelClient: new ScriptedModelClient([{ outputText: 'hi', items: [assistantMessage('hi')] }]), model, log });
    const session = await agent.newSession();
    await session.run('hello');
    const html = renderReport(await reportData(log, session.id, undefined, { prices: { other: { input: 1, output: 1 } } }));
    expect(html).toContain('leaves out the calls of &lt;img src=x onerror=alert(1)&gt;: no price');
    expect(html).not.toContain(model);
    await log.close();
  });
});
