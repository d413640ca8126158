// The report's accounting lines: per step the cacheable prefix and cost the audit gives, and the summary line.
import { describe, expect, it } from 'vitest';
import { runDemoSession } from '../../src/cli/demo/coding-session.js';
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
    await log.close();
  });
});
