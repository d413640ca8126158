// Approvals across a real process restart on PostgreSQL: SIGKILL while interrupted, resume in a new process, approve,
// finish; and two processes deciding the same call at once: exactly one decision is recorded.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgresLog } from '../src/postgres/index.js';
import { PG_URL, SKIP_MESSAGE, createSchema } from './support.js';
import { replaySession, type SessionEvent } from '../src/index.js';
import { checkSessionLaws } from '../src/testing/runtime-laws.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const childScript = fileURLToPath(new URL('../test/support/approval-child.ts', import.meta.url));

interface Child {
  readonly process: ChildProcess;
  /** Resolves with the first JSON line that has `key`. */
  line(key: string): Promise<Record<string, unknown>>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const startChild = (settings: Record<string, unknown>): Child => {
  const child = spawn(process.execPath, ['--import', 'tsx', childScript, JSON.stringify(settings)], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const waiters: Array<() => void> = [];
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (const w of waiters) w();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const line = (key: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = (): void => {
        for (const text of stdout.split('\n')) {
          if (!text.startsWith('{')) continue;
          const parsed = JSON.parse(text) as Record<string, unknown>;
          if (key in parsed) return resolve(parsed);
        }
      };
      waiters.push(check);
      check();
      void exited.then(({ code, signal }) => reject(new Error(`child exited (${code ?? signal}) before printing ${key}: ${stderr}`)));
      setTimeout(() => reject(new Error(`no ${key} after 60 s: ${stderr}`)), 60_000).unref();
    });
  return { process: child, line, exited };
};

let dropSchema: (() => Promise<void>) | undefined;
afterEach(async () => {
  await dropSchema?.();
  dropSchema = undefined;
});

const PENDING = [{ callId: 'c2', name: 'deploy', arguments: '{"target":"prod"}', step: 1 }];

describe.skipIf(!PG_URL)('approvals across a restart (PostgreSQL)', () => {
  it('SIGKILL while interrupted; a new process resumes, approves and finishes; verify, laws and replay hold', async () => {
    const { schema, drop } = await createSchema(PG_URL!);
    dropSchema = drop;
    const base = { backend: 'pg', url: PG_URL, schema, sessionId: 'pg-deploy' };
    const first = startChild({ ...base, phase: 'start' });
    expect(await first.line('interrupted')).toEqual({ interrupted: true, pending: PENDING });
    first.process.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const second = startChild({ ...base, phase: 'finish', by: 'ana' });
    expect(await second.line('pending')).toEqual({ pending: PENDING });
    expect(await second.line('status')).toEqual({ status: 'finished', outputText: 'deployed' });
    expect((await second.exited).code).toBe(0);

    const log = await openPostgresLog({ connectionString: PG_URL! }, { schema });
    try {
      expect((await log.verify('pg-deploy')).valid).toBe(true);
      const events: SessionEvent[] = [];
      for await (const e of log.read('pg-deploy')) events.push(e);
      expect(checkSessionLaws(events)).toEqual([]);
      expect(events.filter((e) => e.type === 'approval.recorded')).toMatchObject([{ callId: 'c2', approved: true, by: 'ana' }]);
      for (const mode of ['project', 'rerun'] as const) {
        const replayed = await replaySession(log, 'pg-deploy', { mode });
        expect(replayed.identical, `${mode}: ${JSON.stringify(replayed.firstDivergence)}`).toBe(true);
      }
    } finally {
      await log.close();
    }
  }, 120_000);

  it('two processes decide the same call at once: one decision is recorded, the other gets APPROVAL_CONFLICT', async () => {
    const { schema, drop } = await createSchema(PG_URL!);
    dropSchema = drop;
    const base = { backend: 'pg', url: PG_URL, schema, sessionId: 'pg-race' };
    const first = startChild({ ...base, phase: 'start' });
    await first.line('interrupted');
    first.process.kill('SIGKILL');
    await first.exited;
    const a = startChild({ ...base, phase: 'race', decision: 'approve', by: 'a' });
    const b = startChild({ ...base, phase: 'race', decision: 'reject', by: 'b' });
    expect(await a.line('ready')).toEqual({ ready: true, pending: 1 });
    expect(await b.line('ready')).toEqual({ ready: true, pending: 1 });
    a.process.stdin!.write('go\n');
    b.process.stdin!.write('go\n');
    const outcomes = await Promise.all([a, b].map((child) => Promise.race([child.line('decided'), child.line('error')])));
    expect(outcomes.filter((o) => o['decided'] === true)).toHaveLength(1);
    expect(outcomes.filter((o) => o['error'] === 'APPROVAL_CONFLICT')).toHaveLength(1);
    await Promise.all([a.exited, b.exited]);
    const log = await openPostgresLog({ connectionString: PG_URL! }, { schema });
    try {
      const events: SessionEvent[] = [];
      for await (const e of log.read('pg-race')) events.push(e);
      expect(events.filter((e) => e.type === 'approval.recorded')).toHaveLength(1);
      expect((await log.verify('pg-race')).valid).toBe(true);
    } finally {
      await log.close();
    }
  }, 120_000);
});

if (!PG_URL) it.skip(SKIP_MESSAGE, () => undefined);
