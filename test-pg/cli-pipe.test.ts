// `context-ledger migrate` in a pipe whose reader has gone, against a real PostgreSQL: it ends quietly with exit 0 and
// the tables are there (the other commands run in a closed pipe in test-integration/cli/pipe.test.ts).
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, SKIP_MESSAGE, freshSchemaName } from './support.js';

const root = resolve(fileURLToPath(import.meta.url), '../..');
const bin = join(root, 'bin', 'context-ledger.js');

/** Runs the CLI with a stdout whose reading end is closed before the command writes anything. */
const cliIntoClosedPipe = (args: readonly string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, FORCE_COLOR: '0' } });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stderr }));
  });

if (PG_URL) {
  const url = PG_URL;
  const schemas: string[] = [];
  const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  afterAll(async () => {
    for (const schema of schemas) await query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  describe('a closed stdout', () => {
    it('migrate ends quietly with exit 0, and the tables are created', async () => {
      for (const json of [false, true]) {
        const schema = freshSchemaName();
        schemas.push(schema);
        const args = ['migrate', '--pg', url, '--schema', schema, ...(json ? ['--json'] : [])];
        expect({ args, ...(await cliIntoClosedPipe(args)) }).toEqual({ args, code: 0, signal: null, stderr: '' });
        const tables = await query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [schema]);
        expect(tables.map((t) => t.table_name)).toEqual(['checkpoints', 'events', 'meta', 'sessions']);
      }
    });
  });
} else {
  describe.skip(SKIP_MESSAGE, () => {
    it('migrate in a closed pipe', () => {});
  });
}
