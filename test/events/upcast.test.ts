// Schema versions on read: a tool.result v1 written by hand comes back as v2; decodeEvent's errors name where.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EVENT_VERSIONS, decodeEvent, isEventDecodeError } from '../../src/events/index.js';
import { GENESIS_HASH, chainHash, openLevelLog } from '../../src/log/index.js';
import { eventKey, headKey } from '../../src/log/keys.js';
import { collect } from '../../src/testing/log-contract.js';

const SESSION = 'legacy';

/** A stored event as written by hand: the envelope, the payload, and the hash over all of it. */
const hashed = (prevHash: string, fields: Record<string, unknown>): Record<string, unknown> => {
  const event = { ...fields, prevHash };
  return { ...event, hash: chainHash(prevHash, event) };
};

/** tool.result as version 1 stored it: the item's snake_case keys. */
const v1ToolResult = (seq: number, prevHash: string, extra: Record<string, unknown>): Record<string, unknown> =>
  hashed(prevHash, { sessionId: SESSION, seq, at: `2024-05-0${seq}T10:00:00.000Z`, v: 1, type: 'tool.result', output: `out ${seq}`, ...extra });

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'context-ledger-upcast-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes events and the head record straight into LevelDB, as an older version of the library would have. */
const writeByHand = async (events: readonly Record<string, unknown>[]): Promise<void> => {
  const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open();
  const last = events.at(-1);
  await db.batch([
    ...events.map((event) => ({ type: 'put' as const, key: eventKey(SESSION, Number(event['seq'])), value: JSON.stringify(event) })),
    { type: 'put' as const, key: headKey(SESSION), value: JSON.stringify({ seq: last?.['seq'], hash: last?.['hash'] }) },
  ]);
  await db.close();
};

describe('upcasting on read', () => {
  it('reads a hand-written tool.result v1 as v2 (callId, isError), and verify stays valid', async () => {
    expect(EVENT_VERSIONS['tool.result']).toBe(2);
    const first = v1ToolResult(1, GENESIS_HASH, { call_id: 'call-1', is_error: true, name: 'bash' });
    const second = v1ToolResult(2, String(first['hash']), { call_id: 'call-2' });
    await writeByHand([first, second]);

    const log = await openLevelLog(dir);
    try {
      const [one, two] = await collect(log.read(SESSION));
      expect(one).toEqual({
        sessionId: SESSION,
        seq: 1,
        at: '2024-05-01T10:00:00.000Z',
        v: 2,
        type: 'tool.result',
        callId: 'call-1',
        isError: true,
        name: 'bash',
        output: 'out 1',
        prevHash: GENESIS_HASH,
        hash: first['hash'],
      });
      expect(one).not.toHaveProperty('call_id');
      expect(one).not.toHaveProperty('is_error');
      expect(two).toMatchObject({ seq: 2, v: 2, callId: 'call-2', isError: false, prevHash: first['hash'], hash: second['hash'] });

      // the hash is over the stored (v1) form, so the chain still verifies
      expect(await log.verify(SESSION)).toEqual({ valid: true, eventCount: 2, firstBrokenSeq: null });

      // new events chain onto the old ones
      const [three] = await log.append(SESSION, [{ type: 'tool.result', callId: 'call-3', output: 'new' }], { expectedSeq: 2 });
      expect(three).toMatchObject({ seq: 3, v: 2, prevHash: second['hash'] });
      expect(await log.verify(SESSION)).toEqual({ valid: true, eventCount: 3, firstBrokenSeq: null });
      expect((await collect(log.read(SESSION))).map((e) => e.v)).toEqual([2, 2, 2]);
    } finally {
      await log.close();
    }
  });

  it('decodeEvent upcasts a raw v1 object to a Right v2', () => {
    const raw = v1ToolResult(1, GENESIS_HASH, { call_id: 'c1', is_error: false });
    const decoded = decodeEvent(raw);
    expect(E.isRight(decoded)).toBe(true);
    if (E.isRight(decoded)) {
      expect(decoded.right).toMatchObject({ type: 'tool.result', v: 2, callId: 'c1', isError: false, output: 'out 1' });
      expect(decoded.right).not.toHaveProperty('call_id');
    }
    // the input is not mutated
    expect(raw).toHaveProperty('call_id', 'c1');
    expect(raw['v']).toBe(1);
  });

  it('approval.recorded v1 reads as v2 without a callId (a fact that decides no pending call)', () => {
    const raw = hashed(GENESIS_HASH, { sessionId: 's', seq: 1, at: 'now', v: 1, type: 'approval.recorded', action: 'deploy', approved: true, by: 'ana' });
    const decoded = decodeEvent(raw);
    expect(E.isRight(decoded) && decoded.right).toEqual({ ...raw, v: 2 });
    expect(EVENT_VERSIONS['approval.recorded']).toBe(2);
    expect(EVENT_VERSIONS['approval.requested']).toBe(1);
  });

  it('decodeEvent of a current v2 event leaves it as it is', () => {
    const raw = hashed(GENESIS_HASH, { sessionId: 's', seq: 1, at: 'now', v: 2, type: 'tool.result', callId: 'c', output: 'o', isError: true });
    expect(decodeEvent(raw)).toEqual(E.right(raw));
  });
});

describe('decodeEvent errors', () => {
  it('a payload of the wrong type: Left naming the session, the seq and the issue path', () => {
    const raw = hashed(GENESIS_HASH, { sessionId: 'sess-9', seq: 7, at: 'now', v: 2, type: 'tool.result', callId: 42, output: 'o' });
    const decoded = decodeEvent(raw);
    expect(E.isLeft(decoded)).toBe(true);
    if (E.isLeft(decoded)) {
      const error = decoded.left;
      expect(isEventDecodeError(error)).toBe(true);
      expect(error.sessionId).toBe('sess-9');
      expect(error.seq).toBe(7);
      expect(error.issues.map((i) => i.path)).toEqual(['callId']);
      expect(error.message).toContain('session "sess-9" seq 7');
      expect(error.message).toContain('callId');
    }
  });

  it('a v1 event missing what the upcaster needs: the path is the v2 field', () => {
    const raw = v1ToolResult(3, GENESIS_HASH, {});
    const decoded = decodeEvent(raw);
    expect(E.isLeft(decoded) && decoded.left.issues.map((i) => i.path)).toEqual(['callId']);
    expect(E.isLeft(decoded) && decoded.left.seq).toBe(3);
  });

  it('a nested problem and a missing envelope field give their paths', () => {
    const nested = decodeEvent({ sessionId: 's', seq: 2, at: 'now', v: 1, prevHash: '', hash: '', type: 'user.input', items: [{ role: 'user' }] });
    expect(E.isLeft(nested) && nested.left.issues.map((i) => i.path)).toEqual(['items.0.type']);
    const noSeq = decodeEvent({ sessionId: 's', at: 'now', v: 1, prevHash: '', hash: '', type: 'memory.cleared' });
    expect(E.isLeft(noSeq) && noSeq.left.issues.map((i) => i.path)).toEqual(['seq']);
  });

  it('an unknown type and values that are not events', () => {
    const unknown = decodeEvent({ sessionId: 's', seq: 1, type: 'no.such.thing' });
    expect(E.isLeft(unknown) && unknown.left).toMatchObject({ sessionId: 's', seq: 1, issues: [{ path: 'type' }] });
    for (const garbage of [null, 42, 'text', [1, 2], undefined]) {
      const decoded = decodeEvent(garbage);
      expect(E.isLeft(decoded)).toBe(true);
      expect(E.isLeft(decoded) && isEventDecodeError(decoded.left)).toBe(true);
    }
  });
});
