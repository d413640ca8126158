// The engine contract (describeLogEngineContract) over the PostgreSQL engine, with a second engine on its own pool as another process.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { SessionLogEngine } from '../src/log/engine.js';
import { createPostgresEngine } from '../src/postgres/engine.js';
import { describeLogEngineContract } from '../src/testing/index.js';
import { PG_URL, SKIP_MESSAGE, createSchema } from './support.js';

if (PG_URL) {
  const url = PG_URL;
  describeLogEngineContract({ describe, it, expect }, 'PostgreSQL', {
    async create() {
      const { schema, drop } = await createSchema(url);
      const engines: SessionLogEngine[] = [];
      const open = (): SessionLogEngine => {
        const engine = createPostgresEngine(new pg.Pool({ connectionString: url, max: 4 }), { schema, ownsPool: true, pageSize: 100, notify: false, pollMs: 50 });
        engines.push(engine);
        return engine;
      };
      return {
        engine: open(),
        openAnother: async () => open(),
        async cleanup() {
          for (const engine of engines) await engine.close();
          await drop();
        },
      };
    },
  });
} else {
  describe.skip(SKIP_MESSAGE, () => {
    it('needs CONTEXT_LEDGER_PG_URL', () => {});
  });
}
