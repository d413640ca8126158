// Bad input and damaged storage: invalid events are refused; values edited on disk are caught by read and verify.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isEventDecodeError, isInvalidEventError, type EventDecodeError, type InvalidEventError, type NewSessionEvent } from '../../src/events/index.js';
import { eventKey, headKey } from '../../src/log/keys.js';
import { chainHash, openLevelLog, type SessionEventLog } from '../../src/log/index.js';
import { collect, inputs, rejectionOf, tickingClock, toolResult } from '../../src/testing/log-contract.js';

const SESSION = 'sess/one';
const OTHER = 'sess/one\u0000';

let dir: string;
let open: SessionEventLog[] = [];

const openLog = async (): Promise<SessionEventLog> => {
  const log = await openLevelLog(dir, { clock: tickingClock().clock });
  open.push(log);
  return log;
};

/** Opens the closed log's directory with classic-level itself and lets `edit` change it. */
const tamper = async (edit: (db: ClassicLevel<string, string>) => Promise<void>): Promise<void> => {
  const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open();
  try {
    await edit(db);
  } finally {
    await db.close();
  }
};

const rawEvent = async (db: ClassicLevel<string, string>, seq: number): Promise<Record<string, unknown>> => {
  const value = await db.get(eventKey(SESSION, seq));
  if (value === undefined) throw new Error(`no event ${seq} stored`);
  return JSON.parse(value) as Record<string, unknown>;
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'context-ledger-corrupt-'));
  open = [];
  // SESSION: 5 events in two batches; OTHER: 2 events, a neighbour that must stay intact.
  const log = await openLog();
  await log.append(SESSION, [...inputs('u', 2)]);
  await log.append(SESSION, [toolResult('c1', 'first output'), toolResult('c2', 'second output'), { type: 'memory.cleared' }]);
  await log.append(OTHER, inputs('o', 2));
  await log.close();
});

afterEach(async () => {
  for (const log of open) await log.close();
  await rm(dir, { recursive: true, force: true });
});

const expectNeighbourIntact = async (log: SessionEventLog): Promise<void> => {
  expect(await log.verify(OTHER)).toEqual({ valid: true, eventCount: 2, firstBrokenSeq: null });
  expect(await collect(log.read(OTHER))).toHaveLength(2);
};

describe('invalid events on append', () => {
  it('are rejected with the path of the problem, and nothing of the batch reaches the disk', async () => {
    const log = await openLog();
    const bad = { type: 'tool.result', callId: 'c9', output: { text: 'not a string' } } as unknown as NewSessionEvent;
    const error = await rejectionOf(log.append(SESSION, [toolResult('c8', 'fine'), bad], { expectedSeq: 5 }));
    expect(isInvalidEventError(error)).toBe(true);
    expect((error as InvalidEventError).index).toBe(1);
    expect((error as InvalidEventError).eventType).toBe('tool.result');
    expect((error as InvalidEventError).issues.map((i) => i.path)).toEqual(['output']);
    expect((error as InvalidEventError).message).toMatch(/#1.*output/);

    const nested = { type: 'model.output', items: [{ type: 'message', role: 'assistant', content: 'ok' }, { role: 'x' }] };
    const nestedError = await rejectionOf(log.append(SESSION, [nested as unknown as NewSessionEvent]));
    expect((nestedError as InvalidEventError).issues.map((i) => i.path)).toContain('items.1.type');
    await log.close();

    const again = await openLog();
    expect(await again.head(SESSION)).toBe(5);
    expect(await again.verify(SESSION)).toEqual({ valid: true, eventCount: 5, firstBrokenSeq: null });
  });
});

describe('values damaged on disk', () => {
  it('a value that is not JSON: read fails naming the session and seq; verify reports that seq', async () => {
    await tamper((db) => db.put(eventKey(SESSION, 3), '{"sessionId": "sess/one", "seq": 3, trunc'));
    const log = await openLog();

    const error = await rejectionOf(collect(log.read(SESSION)));
    expect(isEventDecodeError(error)).toBe(true);
    const decodeError = error as EventDecodeError;
    expect(decodeError.sessionId).toBe(SESSION);
    expect(decodeError.seq).toBe(3);
    expect(decodeError.message).toContain(JSON.stringify(SESSION));
    expect(decodeError.message).toContain('seq 3');
    expect(decodeError.message).toMatch(/not JSON/);

    // the damage is local: the events before it still read, and so does a range after it
    expect((await collect(log.read(SESSION, { toSeq: 2 }))).map((e) => e.seq)).toEqual([1, 2]);
    expect((await collect(log.read(SESSION, { fromSeq: 4 }))).map((e) => e.seq)).toEqual([4, 5]);

    expect(await log.verify(SESSION)).toMatchObject({ valid: false, firstBrokenSeq: 3 });
    await expectNeighbourIntact(log);
  });

  it('valid JSON whose content was edited: verify reports that seq', async () => {
    await tamper(async (db) => {
      const event = await rawEvent(db, 3);
      await db.put(eventKey(SESSION, 3), JSON.stringify({ ...event, output: 'a forged output' }));
    });
    const log = await openLog();
    expect(await log.verify(SESSION)).toMatchObject({ valid: false, firstBrokenSeq: 3 });
    await expectNeighbourIntact(log);
  });

  it('valid JSON that is no longer a valid event: read names the session, seq and path; verify reports that seq', async () => {
    await tamper(async (db) => {
      const event = await rawEvent(db, 2);
      await db.put(eventKey(SESSION, 2), JSON.stringify({ ...event, items: 'gone' }));
    });
    const log = await openLog();
    const error = await rejectionOf(collect(log.read(SESSION)));
    expect(isEventDecodeError(error)).toBe(true);
    expect(error).toMatchObject({ sessionId: SESSION, seq: 2 });
    expect((error as EventDecodeError).issues.map((i) => i.path)).toContain('items');
    expect((error as EventDecodeError).message).toMatch(/seq 2.*items/);
    expect(await log.verify(SESSION)).toMatchObject({ valid: false, firstBrokenSeq: 2 });
  });

  it('an edited hash: verify reports that seq', async () => {
    await tamper(async (db) => {
      const event = await rawEvent(db, 4);
      await db.put(eventKey(SESSION, 4), JSON.stringify({ ...event, hash: 'f'.repeat(64) }));
    });
    const log = await openLog();
    expect(await log.verify(SESSION)).toMatchObject({ valid: false, firstBrokenSeq: 4 });
  });

  it('a deleted event in the middle: read fails naming the missing seq; verify reports it', async () => {
    await tamper((db) => db.del(eventKey(SESSION, 3)));
    const log = await openLog();
    const error = await rejectionOf(collect(log.read(SESSION)));
    expect(isEventDecodeError(error)).toBe(true);
    expect(error).toMatchObject({ sessionId: SESSION, seq: 3 });
    expect((error as Error).message).toMatch(/event 3 is missing/);
    expect(await log.verify(SESSION)).toMatchObject({ valid: false, firstBrokenSeq: 3 });
    await expectNeighbourIntact(log);
  });

  it('the deleted last event: verify alone sees a shorter consistent chain; an anchor taken before reports the rollback at its seq', async () => {
    const before = await openLog();
    const anchor = await before.anchor(SESSION);
    await before.close();
    await tamper((db) => db.del(eventKey(SESSION, 5)));
    const log = await openLog();
    expect(await log.verify(SESSION)).toEqual({ valid: true, eventCount: 4, firstBrokenSeq: null });
    expect(await log.verify(SESSION, { anchors: [anchor] })).toMatchObject({ valid: false, firstBrokenSeq: 5, rollback: true });
  });

  it('the deleted events of the first batch and after: verify reports a rollback from the head record alone', async () => {
    await tamper(async (db) => {
      for (let seq = 2; seq <= 5; seq++) await db.del(eventKey(SESSION, seq));
    });
    const log = await openLog();
    expect(await log.verify(SESSION)).toMatchObject({ valid: false, eventCount: 1, firstBrokenSeq: 2, rollback: true });
  });

  it('the deleted first event: verify reports seq 1', async () => {
    await tamper((db) => db.del(eventKey(SESSION, 1)));
    const log = await openLog();
    expect(await log.verify(SESSION)).toMatchObject({ valid: false, firstBrokenSeq: 1 });
  });

  it('two values swapped: read fails at the first of them; verify reports it', async () => {
    await tamper(async (db) => {
      const [two, four] = await db.getMany([eventKey(SESSION, 2), eventKey(SESSION, 4)]);
      if (two === undefined || four === undefined) throw new Error('events 2 and 4 should exist');
      await db.batch([
        { type: 'put', key: eventKey(SESSION, 2), value: four },
        { type: 'put', key: eventKey(SESSION, 4), value: two },
      ]);
    });
    const log = await openLog();
    const error = await rejectionOf(collect(log.read(SESSION)));
    expect(isEventDecodeError(error)).toBe(true);
    expect(error).toMatchObject({ sessionId: SESSION, seq: 2 });
    expect(await log.verify(SESSION)).toMatchObject({ valid: false, firstBrokenSeq: 2 });
    await expectNeighbourIntact(log);
  });

  it("another session's event copied in: read and verify both flag it", async () => {
    await tamper(async (db) => {
      const foreign = await db.get(eventKey(OTHER, 2));
      if (foreign === undefined) throw new Error('the neighbour should have event 2');
      await db.put(eventKey(SESSION, 2), foreign);
    });
    const log = await openLog();
    expect(await rejectionOf(collect(log.read(SESSION)))).toMatchObject({ name: 'EventDecodeError', sessionId: SESSION, seq: 2 });
    expect(await log.verify(SESSION)).toMatchObject({ valid: false, firstBrokenSeq: 2 });
  });

  it('an edit re-chained by hand (later hashes recomputed) is caught by an anchor, not by the head record of the first batch', async () => {
    const before = await openLog();
    const anchor = await before.anchor(SESSION);
    await before.close();
    await tamper(async (db) => {
      const four = await rawEvent(db, 4);
      const five = await rawEvent(db, 5);
      const forgedFour: Record<string, unknown> = { ...four, output: 'forged' };
      forgedFour['hash'] = chainHash(String(four['prevHash']), forgedFour);
      const forgedFive: Record<string, unknown> = { ...five, prevHash: forgedFour['hash'] };
      forgedFive['hash'] = chainHash(String(forgedFour['hash']), forgedFive);
      await db.put(eventKey(SESSION, 4), JSON.stringify(forgedFour));
      await db.put(eventKey(SESSION, 5), JSON.stringify(forgedFive));
    });
    const log = await openLog();
    expect((await log.verify(SESSION)).valid).toBe(true); // the record is at seq 2, before the rewrite
    const result = await log.verify(SESSION, { anchors: [anchor] });
    expect(result).toMatchObject({ valid: false, firstBrokenSeq: 5 });
    expect(result.problem).toMatch(/anchor/);
  });

  it('an edit re-chained by hand from the first batch on is caught by the head record', async () => {
    await tamper(async (db) => {
      let prevHash: string | undefined;
      for (let seq = 2; seq <= 5; seq++) {
        const event = await rawEvent(db, seq);
        if (seq === 2) event['items'] = [{ type: 'message', role: 'user', content: 'forged' }];
        if (prevHash !== undefined) event['prevHash'] = prevHash;
        event['hash'] = chainHash(String(event['prevHash']), event);
        prevHash = String(event['hash']);
        await db.put(eventKey(SESSION, seq), JSON.stringify(event));
      }
    });
    const log = await openLog();
    const result = await log.verify(SESSION);
    expect(result).toMatchObject({ valid: false, firstBrokenSeq: 2 });
    expect(result.problem).toMatch(/head record/);
  });

  it('the head record removed: verify is not valid, and an append continues after the last event instead of overwriting one', async () => {
    await tamper((db) => db.del(headKey(SESSION)));
    const log = await openLog();
    const result = await log.verify(SESSION);
    expect(result.valid).toBe(false);
    expect(result.problem).toMatch(/head/);
    const [appended] = await log.append(SESSION, [{ type: 'memory.cleared' }]);
    expect(appended?.seq).toBe(6);
    expect((await collect(log.read(SESSION))).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await log.verify(SESSION)).toMatchObject({ valid: true, eventCount: 6 });
  });
});
