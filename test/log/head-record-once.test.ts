// The head record is written once, with a session's first batch, and checked by verify as the session's stored anchor;
// a corrupt head record is reported by verify and repaired by the next append.
import { ClassicLevel } from 'classic-level';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chainHash, copySession, createStoreLog, openLevelLog, openMemoryLog, type SessionEventLog, type StringLevel } from '../../src/log/index.js';
import { eventKey, headKey, headRange } from '../../src/log/keys.js';
import { collectAll, rejectionOf, says, stepClock, tempDir } from './support.js';

let dir: string;
let remove: () => Promise<void>;
beforeEach(async () => {
  ({ dir, remove } = await tempDir('head-once'));
});
afterEach(async () => {
  await remove();
});

type Db = ClassicLevel<string, string>;

const openDb = async (): Promise<Db> => {
  const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open();
  return db;
};

/** Opens the directory with classic-level itself (the log must be closed) and lets `edit` change it. */
const tamper = async (edit: (db: Db) => Promise<unknown>): Promise<void> => {
  const db = await openDb();
  try {
    await edit(db);
  } finally {
    await db.close();
  }
};

const headRecords = async (): Promise<[string, string][]> => {
  const db = await openDb();
  try {
    return (await db.iterator(headRange).all()) as [string, string][];
  } finally {
    await db.close();
  }
};

/** A log over classic-level whose writes are counted by kind, and can be made to fail. */
const countedLog = async (): Promise<{ log: SessionEventLog; writes: { put: number; batch: number[] }; fail: { next: boolean } }> => {
  const db = await openDb();
  const writes = { put: 0, batch: [] as number[] };
  const fail = { next: false };
  const injected = (): Promise<never> => {
    fail.next = false;
    return Promise.reject(Object.assign(new Error('injected LevelDB write failure'), { code: 'LEVEL_IO_ERROR' }));
  };
  const realPut = db.put.bind(db) as (...args: unknown[]) => Promise<void>;
  const realBatch = db.batch.bind(db) as (...args: unknown[]) => Promise<void>;
  (db as unknown as { put: unknown }).put = (...args: unknown[]) => {
    if (fail.next) return injected();
    writes.put += 1;
    return realPut(...args);
  };
  (db as unknown as { batch: unknown }).batch = (...args: unknown[]) => {
    if (fail.next) return injected();
    writes.batch.push((args[0] as unknown[]).length);
    return realBatch(...args);
  };
  // chain version 1: the hashes pinned below are those of decision 0005's chain (version 2 is pinned in test/log/erase.test.ts)
  return { log: createStoreLog(db as unknown as StringLevel, { clock: stepClock(), chainVersion: 1 }), writes, fail };
};

describe('the head record is written once', () => {
  it('with the first batch; then a one-event append is one put and a batch holds only events; the stored bytes are as before', async () => {
    const { log, writes } = await countedLog();
    await log.append('once', says('first', 1));
    expect(writes).toEqual({ put: 0, batch: [2] }); // the event and the head record
    for (let i = 0; i < 20; i++) await log.append('once', says(`single${i}`, 1));
    expect(writes).toEqual({ put: 20, batch: [2] });
    const last = await log.append('once', says('batch', 3));
    expect(writes).toEqual({ put: 20, batch: [2, 3] });
    const events = await collectAll(log.read('once', { verify: true }));
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
    // the hashes the code that rewrote the head record in every batch gave for the same appends
    expect(events[0]?.hash).toBe('50596ac990c09abf8a8bba427b8075acfb4785c969d8e7795972955b3ea591aa');
    expect(last[2]?.hash).toBe('e35851f23345f08487be61bc45c62ca61cdb1695e2a27d37ac3662a5d40a7c43');
    expect(await log.verify('once')).toEqual({ valid: true, eventCount: 24, firstBrokenSeq: null });
    expect(await collectAll(log.sessions())).toEqual(['once']);
    await log.close();
    const records = await headRecords();
    expect(records).toEqual([[headKey('once'), JSON.stringify({ seq: 1, hash: events[0]?.hash })]]);
  });

  it('a first batch that fails writes no record; the next append writes it with its own first events', async () => {
    const { log, writes, fail } = await countedLog();
    fail.next = true;
    expect(await rejectionOf(log.append('s', says('lost', 2)))).toMatchObject({ name: 'LogWriteError' });
    await log.append('s', says('a', 1));
    expect(writes).toEqual({ put: 0, batch: [2] });
    fail.next = true;
    expect(await rejectionOf(log.append('s', says('lost', 1)))).toMatchObject({ name: 'LogWriteError' });
    const [second] = await log.append('s', says('b', 1));
    expect(second?.seq).toBe(2);
    expect(writes).toEqual({ put: 1, batch: [2] }); // the re-read found the record in place: no rewrite
    expect(await log.verify('s')).toEqual({ valid: true, eventCount: 2, firstBrokenSeq: null });
    await log.close();
    const first = (await headRecords()).map(([, value]) => JSON.parse(value) as { seq: number });
    expect(first.map((r) => r.seq)).toEqual([1]);
  });

  it('an import writes the record with its first batch too: copySession into an empty store lists and verifies the session', async () => {
    const source = await openMemoryLog({ clock: stepClock() });
    await source.append('moved', says('a', 3));
    for (let i = 0; i < 3; i++) await source.append('moved', says(`b${i}`, 1));
    const target = await openLevelLog(dir);
    expect(await copySession(source, target, 'moved', { batchSize: 2 })).toEqual({ copied: 6, head: 6 });
    expect(await collectAll(target.sessions())).toEqual(['moved']);
    expect(await target.verify('moved')).toEqual({ valid: true, eventCount: 6, firstBrokenSeq: null });
    const second = (await collectAll(target.read('moved')))[1];
    await target.close();
    await source.close();
    expect(await headRecords()).toEqual([[headKey('moved'), JSON.stringify({ seq: 2, hash: second?.hash })]]);
  });

  it('a store written by the old code (the record at the last event) verifies and takes appends; the record stays', async () => {
    let log = await openLevelLog(dir, { clock: stepClock() });
    await log.append('old', says('a', 2));
    for (let i = 0; i < 3; i++) await log.append('old', says(`b${i}`, 1));
    const anchor = await log.anchor('old');
    await log.close();
    const legacy = JSON.stringify({ seq: anchor.seq, hash: anchor.hash });
    await tamper((db) => db.put(headKey('old'), legacy));
    log = await openLevelLog(dir, { clock: stepClock() });
    expect(await log.verify('old')).toEqual({ valid: true, eventCount: 5, firstBrokenSeq: null });
    await log.append('old', says('c', 1));
    await log.append('old', says('d', 2));
    expect(await log.verify('old')).toEqual({ valid: true, eventCount: 8, firstBrokenSeq: null });
    await log.close();
    expect(await headRecords()).toEqual([[headKey('old'), legacy]]);
    // that record still sees its events removed: fewer events than its seq is a rollback
    await tamper(async (db) => {
      for (let seq = 4; seq <= 8; seq++) await db.del(eventKey('old', seq));
    });
    log = await openLevelLog(dir);
    expect(await log.verify('old')).toMatchObject({ valid: false, eventCount: 3, firstBrokenSeq: 4, rollback: true });
    await log.close();
  });

  it('a removed last event is not seen by verify alone (the record is at the first batch); an anchor kept outside detects it', async () => {
    let log = await openLevelLog(dir, { clock: stepClock() });
    await log.append('s', says('a', 1));
    for (let i = 0; i < 4; i++) await log.append('s', says(`b${i}`, 1));
    const anchor = await log.anchor('s');
    expect(anchor.seq).toBe(5);
    await log.close();
    await tamper((db) => db.del(eventKey('s', 5)));
    log = await openLevelLog(dir);
    expect(await log.verify('s')).toEqual({ valid: true, eventCount: 4, firstBrokenSeq: null });
    const result = await log.verify('s', { anchors: [anchor] });
    expect(result).toMatchObject({ valid: false, eventCount: 4, firstBrokenSeq: 5, rollback: true });
    expect(result.problem).toMatch(/rollback: an anchor is at seq 5/);
    await log.close();
  });

  it('events removed back past the first batch are a rollback without anchors', async () => {
    let log = await openLevelLog(dir, { clock: stepClock() });
    await log.append('s', says('a', 3));
    for (let i = 0; i < 3; i++) await log.append('s', says(`b${i}`, 1));
    await log.close();
    await tamper(async (db) => {
      for (let seq = 3; seq <= 6; seq++) await db.del(eventKey('s', seq));
    });
    log = await openLevelLog(dir);
    const result = await log.verify('s');
    expect(result).toMatchObject({ valid: false, eventCount: 2, firstBrokenSeq: 3, rollback: true });
    expect(result.problem).toMatch(/head record is at seq 3 but the session has 2 events/);
    await log.close();
  });

  it('a removed record of the first batch is reported; the next append writes it again, at its own tip', async () => {
    let log = await openLevelLog(dir, { clock: stepClock() });
    await log.append('s', says('a', 2));
    for (let i = 0; i < 3; i++) await log.append('s', says(`b${i}`, 1));
    await log.close();
    await tamper((db) => db.del(headKey('s')));
    log = await openLevelLog(dir, { clock: stepClock() });
    const result = await log.verify('s');
    expect(result).toMatchObject({ valid: false, eventCount: 5, firstBrokenSeq: 6 });
    expect(result.problem).toMatch(/head record is missing but 5 events are stored/);
    expect(await collectAll(log.sessions())).toEqual([]); // sessions() lists the records
    const [appended] = await log.append('s', says('c', 1));
    expect(await log.verify('s')).toEqual({ valid: true, eventCount: 6, firstBrokenSeq: null });
    expect(await collectAll(log.sessions())).toEqual(['s']);
    await log.close();
    expect(await headRecords()).toEqual([[headKey('s'), JSON.stringify({ seq: 6, hash: appended?.hash })]]);
  });

  it('an edit re-chained after the record is caught by an anchor; one at or before the record is caught by the record', async () => {
    let log = await openLevelLog(dir, { clock: stepClock() });
    await log.append('s', says('a', 2));
    for (let i = 0; i < 3; i++) await log.append('s', says(`b${i}`, 1));
    const anchor = await log.anchor('s');
    await log.close();
    const rechainFrom = async (from: number): Promise<void> =>
      tamper(async (db) => {
        let prevHash: string | undefined;
        for (let seq = from; seq <= 5; seq++) {
          const event = JSON.parse((await db.get(eventKey('s', seq))) as string) as Record<string, unknown>;
          if (seq === from) event['items'] = [{ type: 'message', role: 'user', content: 'forged' }];
          if (prevHash !== undefined) event['prevHash'] = prevHash;
          event['hash'] = chainHash(String(event['prevHash']), event);
          prevHash = String(event['hash']);
          await db.put(eventKey('s', seq), JSON.stringify(event));
        }
      });
    await rechainFrom(4);
    log = await openLevelLog(dir);
    expect((await log.verify('s')).valid).toBe(true); // a consistent rewrite after the record: only anchors see it
    expect(await log.verify('s', { anchors: [anchor] })).toMatchObject({ valid: false, firstBrokenSeq: 5 });
    await log.close();
    await rechainFrom(2);
    log = await openLevelLog(dir);
    const result = await log.verify('s');
    expect(result).toMatchObject({ valid: false, firstBrokenSeq: 2 });
    expect(result.problem).toMatch(/head record does not match event 2/);
    await log.close();
  });
});

// Fault "corrupt head record": a non-JSON head threw SyntaxError, `seq: "13"` made append write seq 131, a head ahead of the events left a gap.
/** The 5-event session the corrupt-head-record tests start from. */
const writeFiveEvents = async (): Promise<void> => {
  const log = await openLevelLog(dir);
  await log.append('s', says('a', 5));
  await log.close();
};

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
  beforeEach(writeFiveEvents);

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
