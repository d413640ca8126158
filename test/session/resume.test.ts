// Save, close, reopen in a new process, resume: the same state (LevelDB on disk).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LlmCompactPolicy, StructuredSummaryCompactPolicy } from '../../src/compact/index.js';
import { assistantMessage, functionCall } from '../../src/items/index.js';
import { openLevelLog } from '../../src/log/index.js';
import { ScriptedModelClient } from '../../src/model/index.js';
import { openSession, type AgentSessionSnapshot } from '../../src/session/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const script = join(root, 'test', 'support', 'print-session-snapshot.ts');

/** Runs the snapshot printer in a fresh Node process. */
const snapshotInNewProcess = (dir: string, id: string): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(tsx, [script, dir, id], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('resume in a new process', () => {
  it('save, close, reopen in another process, resume: the same snapshot', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'context-ledger-resume-'));
    dirs.push(dir);
    const log = await openLevelLog(dir);
    const session = await openSession(log, { id: 'task-7', checkpointEvery: 8 });
    await session.memory.addUserInput('Add a --json flag to the CLI.');
    for (let i = 0; i < 6; i++) {
      await session.memory.addOutputItems([functionCall(`c${i}`, i % 2 ? 'edit_file' : 'read_file', { path: `src/cli/${i}.ts` })]);
      await session.memory.addToolOutput(`c${i}`, `result ${i}`);
    }
    await session.record([
      { type: 'command.failed', command: 'npm run build', exitCode: 2, error: 'TS2339' },
      { type: 'artifact.changed', path: 'src/cli/index.ts', change: 'modified' },
    ]);
    const client = new ScriptedModelClient([{ outputText: '{"goal":"--json flag","completed":["parsed args"],"pending":["docs"]}', items: [] }]);
    await session.compact(new LlmCompactPolicy(client, 'm', 4));
    await session.memory.addOutputItems([assistantMessage('Next I will write the docs.')]);
    await session.record([{ type: 'test.result', status: 'passed', suite: 'cli' }]);
    await session.autoCompactIfNecessary(new StructuredSummaryCompactPolicy({ maxItems: 3 }), { step: 9 });
    await session.memory.addOutputItems([assistantMessage('tail after the last compaction')]);
    const saved = await session.save();
    const expected: AgentSessionSnapshot = JSON.parse(JSON.stringify(saved));
    expect(expected.lastCompactResult?.readFiles.length).toBeGreaterThan(0);
    expect(expected.memory.summary).toContain('AI4J_COMPACT_SUMMARY');
    await log.close();

    const child = await snapshotInNewProcess(dir, 'task-7');
    expect(child.stderr).toBe('');
    expect(child.code).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual(expected);

    // and again here after the other process closed the log: nothing was appended by resuming
    const reopened = await openLevelLog(dir);
    expect(await reopened.head('task-7')).toBe(expected.headSeq);
    const resumed = await openSession(reopened, { id: 'task-7' });
    expect(JSON.parse(JSON.stringify(resumed.snapshot()))).toEqual(expected);
    expect((await reopened.verify('task-7')).valid).toBe(true);
    await reopened.close();
  });

  it('resumes from the events alone when no checkpoint was saved', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'context-ledger-resume-'));
    dirs.push(dir);
    const log = await openLevelLog(dir);
    const session = await openSession(log, { id: 'no-save', checkpointEvery: 0 });
    await session.memory.addUserInput('hello');
    await session.compact(new StructuredSummaryCompactPolicy({ maxItems: 5 }));
    const expected = JSON.parse(JSON.stringify(session.snapshot()));
    await log.close();

    const child = await snapshotInNewProcess(dir, 'no-save');
    expect(child.code).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual(expected);
  });
});
