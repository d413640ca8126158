// Fault "corrupt head record": a non-JSON head threw SyntaxError, `seq: "13"` made append write seq 131, a head ahead of the events left a gap.
import { ClassicLevel } from 'classic-level';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLevelLog } from '../../src/log/index.js';
import { eventKey, headKey } from '../../src/log/keys.js';
import { collectAll, says, tempDir } from './support.js';

let dir: string;
let remove: () => Promise<void>;

beforeEach(async () => {
  ({ dir, remove } = await tempDir('head-record'));
  const log = await openLevelLog(dir);
  await log.append('s', says('a', 5));
  await log.close();
});
afterEach(async () => {
  await remove();
});

const setHeadRecord = async (value: string | undefined, deleteEventsFrom?: number): Promise<void> => {
  const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open();
  try {
    if (value === undefined) await db.del(headKey('s'));
    else await db.put(headKey('s'), value);
    if (deleteEventsFrom !== undefined) for (let seq = deleteEventsFrom; seq <= 5; seq++) await db.del(eventKey('s', seq));
  } finally {
    await db.close();
  }
};

const storedHash = async (seq: number): Promise<string> => {
  const log = await openLevelLog(dir);
  try {
    const [event] = await collectAll(log.read('s', { fromSeq: seq, toSeq: seq }));
    return event!.hash;
  } finally {
    await log.close();
  }
};

/** Verify reports the problem, head and appends go on from the true last event, and the next append repairs the record. */
const expectRecovers = async (trueCount: number, problem: RegExp): Promise<void> => {
  const log = await openLevelLog(dir);
  const before = await log.verify('s');
  expect(before).toMatchObject({ valid: false, eventCount: trueCount, firstBrokenSeq: trueCount + 1 });
  expect(before.problem).toMatch(problem);
  expect(await log.head('s')).toBe(trueCount);
  expect((await log.anchor('s')).seq).toBe(trueCount);
  const appended = await log.append('s', says('b', 2), { expectedSeq: trueCount });
  expect(appended.map((e) => e.seq)).toEqual([trueCount + 1, trueCount + 2]);
  expect(await log.verify('s')).toEqual({ valid: true, eventCount: trueCount + 2, firstBrokenSeq: null });
  expect((await collectAll(log.read('s', { verify: true }))).map((e) => e.seq)).toEqual(Array.from({ length: trueCount + 2 }, (_, i) => i + 1));
  await log.close();
};

describe('corrupt head record', () => {
  it('non-JSON: verify, head and append do not throw SyntaxError', async () => {
    await setHeadRecord('{"seq": 5, "hash"');
    await expectRecovers(5, /head record is not JSON/);
  });

  it('seq "13" as a string: the next append is seq 6, not 131', async () => {
    await setHeadRecord(JSON.stringify({ seq: '13', hash: await storedHash(5) }));
    await expectRecovers(5, /head record is not \{ seq: a non-negative integer/);
  });

  it('a head ahead of the events (the store lost its tail): a rollback; appends continue from the last event, with no gap', async () => {
    const hash3 = await storedHash(3);
    await setHeadRecord(JSON.stringify({ seq: 5, hash: hash3 }), 4);
    await expectRecovers(3, /rollback: the head record is at seq 5 but the session has 3 events/);
  });

  it('a missing head record: appends continue from the last event', async () => {
    await setHeadRecord(undefined);
    await expectRecovers(5, /head record is missing but 5 events are stored/);
  });

  it('a head record with a bad hash is reported, and appends chain onto the last event itself', async () => {
    await setHeadRecord(JSON.stringify({ seq: 5, hash: 'e'.repeat(64) }));
    const log = await openLevelLog(dir);
    expect(await log.verify('s')).toMatchObject({
      valid: false,
      firstBrokenSeq: 5,
      problem: 'the head record does not match event 5: the chain was rewritten at or before it',
    });
    await log.append('s', says('c', 1));
    expect((await log.verify('s')).valid).toBe(true);
    await log.close();
  });
});
