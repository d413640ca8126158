// Crash safety: a child appends in a loop and is SIGKILLed at a random moment; the reopened log is intact.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isLogInUseError, openLevelLog } from '../../src/log/index.js';
import { collect, rejectionOf } from '../../src/testing/log-contract.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const writerScript = fileURLToPath(new URL('../../test/support/crash-writer.ts', import.meta.url));

interface Killed {
  readonly reportText: string;
  readonly stderr: string;
}

/**
 * Starts the writer, waits until its log is open, runs `whileRunning`, lets it write for
 * `killAfterMs`, then SIGKILLs it.
 */
const runAndKill = async (
  dir: string,
  seed: number,
  sync: boolean,
  killAfterMs: number,
  whileRunning?: () => Promise<void>,
): Promise<Killed> => {
  const report = join(dir, '..', `${seed}.report`);
  const child = spawn(process.execPath, ['--import', 'tsx', writerScript, dir, report, String(seed), ...(sync ? ['sync'] : [])], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('ready\n')) resolve();
    });
    void exited.then(({ code, signal }) => reject(new Error(`writer exited before it was ready (${code ?? signal}): ${stderr}`)));
    setTimeout(() => reject(new Error(`writer not ready after 20 s: ${stderr}`)), 20_000).unref();
  });
  try {
    await ready;
    await whileRunning?.();
    await sleep(killAfterMs);
  } finally {
    child.kill('SIGKILL');
  }
  const { signal } = await exited;
  expect(signal, `the writer must still be running when killed; stderr: ${stderr}`).toBe('SIGKILL');
  const reportText = await readFile(report, 'utf8').catch(() => '');
  await rm(report, { force: true });
  return { reportText, stderr };
};

/** The highest resolved seq reported per session (only whole lines count). */
const lastReported = (text: string): Map<string, number> => {
  const last = new Map<string, number>();
  for (const line of text.split('\n').slice(0, -1)) {
    const [session, seq] = line.split(' ');
    if (session && seq) last.set(session, Math.max(last.get(session) ?? 0, Number(seq)));
  }
  return last;
};

// CRASH_SEED=<n> repeats a failing run's batch sizes and kill delay (where the kill lands still varies).
const BASE_SEED = Number(process.env['CRASH_SEED'] ?? Date.now() % 2 ** 31);

const RUNS = [
  { run: 1, sync: false },
  { run: 2, sync: false },
  { run: 3, sync: false },
  { run: 4, sync: true },
];

describe('crash safety (SIGKILL during appends)', () => {
  it.each(RUNS)('run $run (sync: $sync): the reopened log verifies, is gap-free and has every resolved append', async ({ run, sync }) => {
    const seed = (BASE_SEED ^ Math.imul(run, 0x9e3779b1)) >>> 0;
    const killAfterMs = 200 + (seed % 1301);
    const context = `CRASH_SEED=${BASE_SEED} run ${run}: killed after ${killAfterMs} ms`;
    const parent = await mkdtemp(join(tmpdir(), 'context-ledger-crash-'));
    const dir = join(parent, 'log');
    try {
      const { reportText } = await runAndKill(dir, seed, sync, killAfterMs, async () => {
        if (run !== 1) return;
        // a second process opening the same directory is told the log is in use
        const error = await rejectionOf(openLevelLog(dir));
        expect(isLogInUseError(error), `${context}: ${String(error)}`).toBe(true);
        expect((error as Error).message).toMatch(/in use/);
      });
      const reported = lastReported(reportText);
      expect(reported.get('a') ?? 0, `${context}: the writer resolved no append on "a"`).toBeGreaterThan(0);
      expect(reported.get('b') ?? 0, `${context}: the writer resolved no append on "b"`).toBeGreaterThan(0);
      expect(reported.get('c') ?? 0, `${context}: the writer resolved no append on "c"`).toBeGreaterThan(0);

      const log = await openLevelLog(dir);
      try {
        expect((await collect(log.sessions())).sort()).toEqual(['a', 'b', 'c']);
        for (const session of ['a', 'b', 'c']) {
          const head = await log.head(session);
          const verified = await log.verify(session);
          expect(verified, `${context}: session ${session}`).toEqual({ valid: true, eventCount: head, firstBrokenSeq: null });
          const seqs = (await collect(log.read(session))).map((e) => e.seq);
          expect(seqs, `${context}: session ${session} is gap-free`).toEqual(Array.from({ length: head }, (_, i) => i + 1));
          expect(head, `${context}: session ${session} lost a resolved append`).toBeGreaterThanOrEqual(reported.get(session) ?? 0);
        }
        // the log takes appends again after the crash
        const head = await log.head('a');
        const [next] = await log.append('a', [{ type: 'memory.cleared' }], { expectedSeq: head });
        expect(next?.seq).toBe(head + 1);
        expect((await log.verify('a')).valid).toBe(true);
      } finally {
        await log.close();
      }
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
