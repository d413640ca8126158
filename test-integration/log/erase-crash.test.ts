// Crash safety of erase: a child erases event after event and is SIGKILLed at a random moment; every event is then
// either as written or erased (with its event.erased), the chain verifies, and erase goes on from there.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openLevelLog } from '../../src/log/index.js';
import { collect } from '../../src/testing/log-contract.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const writerScript = fileURLToPath(new URL('../../test/support/erase-writer.ts', import.meta.url));
const EVENTS = 40;

const runAndKill = async (dir: string, killAfterMs: number): Promise<void> => {
  const child = spawn(process.execPath, ['--import', 'tsx', writerScript, dir, String(EVENTS)], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('ready\n')) resolve();
    });
    void exited.then((signal) => reject(new Error(`writer exited before it was ready (${String(signal)}): ${stderr}`)));
    setTimeout(() => reject(new Error(`writer not ready after 60 s: ${stderr}`)), 60_000).unref();
  });
  try {
    await ready;
    await sleep(killAfterMs);
  } finally {
    child.kill('SIGKILL');
  }
  await exited;
};

describe('SIGKILL during erase', () => {
  it('leaves each event old or new, never a broken chain; a later erase finishes the job', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'erase-crash-'));
    try {
      let previous = 0;
      for (const killAfterMs of [15, 60, 140, 260]) {
        await runAndKill(dir, killAfterMs);
        const log = await openLevelLog(dir);
        const result = await log.verify('s');
        expect(result.valid, result.problem).toBe(true);
        const erased = result.erased ?? [];
        expect(erased.length).toBeGreaterThanOrEqual(previous); // nothing comes back
        previous = erased.length;
        const events = await collect(log.read('s'));
        const erasedSet = new Set(erased);
        for (const event of events.slice(0, EVENTS)) {
          const output = (event as unknown as { output: string }).output;
          if (erasedSet.has(event.seq)) expect(output).toBe('[erased]');
          else expect(output).toBe(`secret-${event.seq}-${'x'.repeat(200)}`);
        }
        const claimed = new Set(events.filter((e) => e.type === 'event.erased').flatMap((e) => (e as unknown as { seqs: number[] }).seqs));
        for (const seq of erased) expect(claimed.has(seq)).toBe(true);
        await log.close();
      }
      const log = await openLevelLog(dir);
      await log.erase('s', { all: true }, { reason: 'finish' });
      expect((await log.verify('s')).erased).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1));
      await log.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
