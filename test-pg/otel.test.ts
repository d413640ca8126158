// A session's OpenTelemetry spans from PostgreSQL: a copy of a recorded session gives the same spans, ids included.
import { describe, expect, it } from 'vitest';
import { runDemoSession } from '../src/cli/demo/coding-session.js';
import { copySession, openMemoryLog } from '../src/log/index.js';
import { sessionSpanRecords } from '../src/otel/index.js';
import { openPostgresLog } from '../src/postgres/index.js';
import { PG_URL, SKIP_MESSAGE, createSchema } from './support.js';

describe.skipIf(!PG_URL)('spans from a PostgreSQL log', () => {
  it('are the spans of the same session in memory: names, parents, attributes, times and ids', async () => {
    const { schema, drop } = await createSchema(PG_URL!);
    const memory = await openMemoryLog();
    const pg = await openPostgresLog({ connectionString: PG_URL! }, { schema });
    try {
      await runDemoSession(memory, { tasks: 1 });
      await copySession(memory, pg, 'demo');
      const fromPg = await sessionSpanRecords(pg, 'demo', { captureContent: true });
      expect(fromPg.length).toBeGreaterThan(10);
      expect(fromPg).toEqual(await sessionSpanRecords(memory, 'demo', { captureContent: true }));
    } finally {
      await pg.close();
      await memory.close();
      await drop();
    }
  }, 120_000);
});

if (!PG_URL) it.skip(SKIP_MESSAGE, () => undefined);
