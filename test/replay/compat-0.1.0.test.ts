// A session recorded by release 0.1.0 (LevelDB fixture) still opens, resumes and replays through the upcasters.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryAt, openLevelLog, openSession, replayContext, replaySession, type SessionEventLog } from '../../src/index.js';
import { rebuildState } from '../../src/session/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';
import { readAll } from './support.js';

const fixture = fileURLToPath(new URL('../fixtures/leveldb-0.1.0', import.meta.url));
let dir: string;
let log: SessionEventLog;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'context-ledger-v010-'));
  await cp(fixture, dir, { recursive: true, filter: (source) => !source.endsWith('README.md') });
  log = await openLevelLog(dir);
});

afterEach(async () => {
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a session recorded by 0.1.0', () => {
  it('verifies, decodes through the upcasters and is lawful', async () => {
    expect(await log.verify('v010-1')).toEqual({ valid: true, eventCount: 100, firstBrokenSeq: null });
    const events = await readAll(log, 'v010-1');
    expect(events[0]).toMatchObject({ type: 'session.started', v: 2 });
    expect(events.find((e) => e.type === 'run.started')).toMatchObject({ v: 2, runtime: 'react' });
    expect(events.some((e) => e.type === 'memory.compacted')).toBe(true);
    expect(checkSessionLaws(events)).toEqual([]);
  });

  it('replays identically in project mode, and step by step', async () => {
    const result = await replaySession(log, 'v010-1');
    expect(result.firstDivergence).toBeUndefined();
    expect(result).toMatchObject({ identical: true, steps: 15 });
    for (const step of [1, 8, 15]) expect((await replayContext(log, 'v010-1', { step })).identical).toBe(true);
  });

  it('its format-1 checkpoint is not trusted (no digest in the chain): state comes from the fold, equal all the same', async () => {
    const checkpoint = await log.latestCheckpoint('v010-1');
    expect((checkpoint?.data as { format?: number }).format).toBe(1);
    const rebuilt = await rebuildState(log, 'v010-1');
    expect(rebuilt.from).toBe('full-fold');
    expect(rebuilt.rejectedCheckpoint).toMatch(/format 1/);
    const at = await memoryAt(log, 'v010-1', { step: 10 });
    expect(at.run.lastStep).toBe(10);
    const session = await openSession(log, { id: 'v010-1' });
    expect(session.state().run).toEqual({ lastStep: 15, openRun: null });
    expect(await log.head('v010-1')).toBe(100); // opening wrote nothing
  });
});
