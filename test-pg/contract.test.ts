// The published SessionEventLog contract suite and model test on PostgreSQL (openPostgresLog).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { describeSessionEventLogContract } from '../src/testing/log-contract.js';
import { checkSessionEventLogModel } from '../src/testing/log-model.js';
import { writerStateCount } from '../src/log/index.js';
import { PG_URL, SKIP_MESSAGE, postgresHarness } from './support.js';

if (PG_URL) {
  const url = PG_URL;
  describeSessionEventLogContract({ describe, it, expect }, 'PostgreSQL (openPostgresLog)', {
    persistent: true,
    multiProcess: true,
    tamperable: true,
    writerStates: writerStateCount,
    create: () => postgresHarness(url),
  });
  describeSessionEventLogContract({ describe, it, expect }, 'PostgreSQL, small pages and groups', {
    persistent: true,
    multiProcess: true,
    tamperable: true,
    create: () => postgresHarness(url, { pageSize: 7, maxGroup: 2, poolSize: 3 }),
  });
  // With NOTIFY: subscribers on the other handle hear appends through LISTEN (the poll is a backstop).
  describeSessionEventLogContract({ describe, it, expect }, 'PostgreSQL, notify: true', {
    persistent: true,
    multiProcess: true,
    tamperable: true,
    create: () => postgresHarness(url, { notify: true }),
  });

  describe('PostgreSQL log against an array model', () => {
    it('with close and reopen', async () => {
      await checkSessionEventLogModel(
        { persistent: true, create: () => postgresHarness(url) },
        { numRuns: Math.min(fc.readConfigureGlobal().numRuns ?? 100, 20) },
      );
    });
  });
} else {
  describe.skip(SKIP_MESSAGE, () => {
    it('needs CONTEXT_LEDGER_PG_URL', () => {});
  });
}
