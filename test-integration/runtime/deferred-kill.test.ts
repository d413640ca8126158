// SIGKILL in the window where a step's bookkeeping events wait for the next append (decision 0033): after step 2's
// tool result is stored and before step 3's model call. The log verifies and holds exactly what decision 0033 says
// (no step.ended for step 2, no step.started for step 3); a new process resumes, continues the run to its end, and
// the session is lawful and replays identically in both modes.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { Agents, DefaultContextProjector, ScriptedModelClient, assistantMessage, defineTool, openLevelLog, replaySession, type SessionEvent } from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const childScript = fileURLToPath(new URL('../../test/support/deferred-kill-child.ts', import.meta.url));

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

const eventsOf = async (sessionId: string): Promise<SessionEvent[]> => {
  const log = await openLevelLog(dir!);
  try {
    expect((await log.verify(sessionId)).valid).toBe(true);
    const events: SessionEvent[] = [];
    for await (const e of log.read(sessionId)) events.push(e);
    return events;
  } finally {
    await log.close();
  }
};

describe('SIGKILL while step events wait for the next append (LevelDB)', () => {
  it('leaves a verified log without the waiting events; a new process continues the run and the session replays', async () => {
    dir = await mkdtemp(join(tmpdir(), 'cl-deferred-kill-'));
    const sessionId = 'deferred-kill';
    const child = spawn(process.execPath, ['--import', 'tsx', childScript, dir, sessionId], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<NodeJS.Signals | number | null>((done) => child.on('exit', (code, signal) => done(signal ?? code)));
    const deadline = Date.now() + 60_000;
    while (!stdout.includes('projecting') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
    expect(stdout, stderr).toContain('projecting');
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const stored = await eventsOf(sessionId);
    const types = stored.filter((e) => e.type !== 'checkpoint.taken').map((e) => `${e.type}${'step' in e && e.step !== undefined ? ` ${e.step}` : ''}`);
    // Step 2's result is the last thing stored: its step.ended and step 3's start waited with the hung projection.
    expect(types.slice(-5)).toEqual(['step.started 2', 'context.projected 2', 'model.requested 2', 'model.responded 2', 'tool.result 2']);
    expect(types).not.toContain('step.ended 2');
    expect(types).not.toContain('step.started 3');

    // A new process: resume, continue the open run to its end.
    const log = await openLevelLog(dir);
    try {
      const read = defineTool({ name: 'read_file', description: 'Read a file', parameters: z.object({ path: z.string() }), execute: ({ path }) => `// ${path}` });
      const agent = Agents.react({
        modelClient: new ScriptedModelClient([{ outputText: 'both read', items: [assistantMessage('both read')] }]),
        model: 'scripted',
        tools: [read],
        log,
        contextProjector: new DefaultContextProjector(),
        contextBudget: { maxTokens: 2_000 },
      });
      const session = await agent.resumeSession(sessionId);
      expect(session.lastStep).toBe(2);
      const result = await session.run();
      expect(result).toMatchObject({ status: 'finished', outputText: 'both read', steps: 1 });
      expect(session.lastStep).toBe(3);
    } finally {
      await log.close();
    }
    const events = await eventsOf(sessionId);
    expect(checkSessionLaws(events)).toEqual([]);
    expect(events.filter((e) => e.type === 'step.started').map((e) => (e as { step: number }).step)).toEqual([1, 2, 3]);
    expect(events.filter((e) => e.type !== 'checkpoint.taken').at(-1)).toMatchObject({ type: 'run.finished' });
    const again = await openLevelLog(dir);
    try {
      for (const mode of ['project', 'rerun'] as const) {
        const replayed = await replaySession(again, sessionId, { mode });
        expect(replayed.identical, `${mode}: ${JSON.stringify(replayed.firstDivergence)} ${replayed.notes?.join('; ')}`).toBe(true);
      }
    } finally {
      await again.close();
    }
  }, 120_000);
});
