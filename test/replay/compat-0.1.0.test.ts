// A session recorded by release 0.1.0 (LevelDB fixture) still opens, resumes and replays through the upcasters.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClassicLevel } from 'classic-level';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryAt, openLevelLog, openSession, replayContext, replaySession, type SessionEventLog } from '../../src/index.js';
import { headRange } from '../../src/log/keys.js';
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

  it('takes appends: its head record (written at seq 100 by 0.1.0) stays where it is, and the session still verifies', async () => {
    const anchor = await log.anchor('v010-1');
    expect(anchor.seq).toBe(100);
    await log.append('v010-1', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'after 0.1.0' }] }]);
    await log.append('v010-1', [{ type: 'memory.cleared' }, { type: 'memory.cleared' }]);
    expect(await log.verify('v010-1', { anchors: [anchor] })).toEqual({ valid: true, eventCount: 103, firstBrokenSeq: null });
    await log.close();
    const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    const records = await db.iterator(headRange).all();
    await db.close();
    expect(records.map(([, value]) => JSON.parse(value) as unknown)).toEqual([{ seq: 100, hash: anchor.hash }]);
    log = await openLevelLog(dir);
    expect(await log.verify('v010-1')).toEqual({ valid: true, eventCount: 103, firstBrokenSeq: null });
  });
});
