// Approvals across a real process restart on LevelDB: a child interrupts for approval and is SIGKILLed; a new process
// resumes the session, sees the pending call, approves it and finishes the run; the log verifies, is lawful and replays.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openLevelLog, replaySession, type SessionEvent } from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(repoRoot, 'bin', 'context-ledger.js');

/** The CLI in a child process: its stdout (it must exit 0). */
const cli = (args: readonly string[]): Promise<string> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: repoRoot, env: { ...process.env, FORCE_COLOR: '0' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => (code === 0 ? done(stdout) : fail(new Error(`cli ${args.join(' ')} exited ${code}: ${stderr}`))));
  });
const childScript = fileURLToPath(new URL('../../test/support/approval-child.ts', import.meta.url));

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

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('approvals across a restart (LevelDB)', () => {
  it('SIGKILL while interrupted; a new process resumes, approves and finishes; verify, laws and replay hold', async () => {
    dir = await mkdtemp(join(tmpdir(), 'cl-approvals-'));
    const sessionId = 'deploy-session';
    const first = startChild({ backend: 'level', dir, sessionId, phase: 'start' });
    const interrupted = await first.line('interrupted');
    expect(interrupted).toEqual({ interrupted: true, pending: [{ callId: 'c2', name: 'deploy', arguments: '{"target":"prod"}', step: 1 }] });
    first.process.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    // While it waits: the audit and the step's context show the pending call.
    expect(await cli(['audit', sessionId, '--dir', dir])).toContain('c2 deploy {"target":"prod"} (step 1): PENDING (waiting for approve / reject)');
    expect(await cli(['context', sessionId, '--step', '1', '--dir', dir])).toContain('approvals asked in this step (1):');

    const second = startChild({ backend: 'level', dir, sessionId, phase: 'finish', by: 'ana' });
    expect(await second.line('pending')).toEqual({ pending: [{ callId: 'c2', name: 'deploy', arguments: '{"target":"prod"}', step: 1 }] });
    expect(await second.line('status')).toEqual({ status: 'finished', outputText: 'deployed' });
    expect((await second.exited).code).toBe(0);
    expect(await cli(['audit', sessionId, '--dir', dir])).toContain('c2 deploy {"target":"prod"} (step 1): approved by ana: release window');
    const reportFile = join(dir, 'report.html');
    await cli(['report', sessionId, '--dir', dir, '--out', reportFile]);
    const html = await readFile(reportFile, 'utf8');
    expect(html).toContain('<section id="approvals">');
    expect(html).toContain('<td>ana</td><td>release window</td>');

    const log = await openLevelLog(dir);
    try {
      expect((await log.verify(sessionId)).valid).toBe(true);
      const events: SessionEvent[] = [];
      for await (const e of log.read(sessionId)) events.push(e);
      expect(checkSessionLaws(events)).toEqual([]);
      expect(events.find((e) => e.type === 'approval.recorded')).toMatchObject({ callId: 'c2', approved: true, by: 'ana', reason: 'release window' });
      const deployed = events.find((e) => e.type === 'tool.result' && e.callId === 'c2');
      expect(deployed?.type === 'tool.result' && deployed.output).toMatch(/^deployed prod \(pid \d+\)$/);
      expect(events.filter((e) => e.type === 'checkpoint.taken').length).toBeGreaterThan(0);
      expect(events.filter((e) => e.type !== 'checkpoint.taken').at(-1)).toMatchObject({ type: 'run.finished' });
      for (const mode of ['project', 'rerun'] as const) {
        const replayed = await replaySession(log, sessionId, { mode });
        expect(replayed.identical, `${mode}: ${JSON.stringify(replayed.firstDivergence)} ${replayed.notes?.join('; ')}`).toBe(true);
      }
    } finally {
      await log.close();
    }
  }, 120_000);
});
