// Faults "rollback is invisible" and "reads do not check hashes": anchors, the keyed chain and read with verify; appends
// to a keyed session without its key.
import { open as openFile, readdir, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isInvalidOptionsError } from '../../src/base/errors.js';
import {
  GENESIS_HASH,
  chainHash,
  chainKeyId,
  isChainBrokenError,
  isChainKeyMismatchError,
  openLevelLog,
  openMemoryLog,
  type Anchor,
  type ChainBrokenError,
  type ChainKeyMismatchError,
  type SessionEventLog,
} from '../../src/log/index.js';
import { eventKey, headKey } from '../../src/log/keys.js';
import { collectAll, rejectionOf, says, stepClock, tempDir } from './support.js';

let dir: string;
let remove: () => Promise<void>;

beforeEach(async () => {
  ({ dir, remove } = await tempDir('integrity'));
});
afterEach(async () => {
  await remove();
});

/** 13 acknowledged events, one append each (one WAL record each); the anchor taken after the last. */
const writeThirteen = async (options: { chainKey?: string } = {}): Promise<Anchor> => {
  const log = await openLevelLog(dir, { clock: stepClock(), ...options });
  for (let i = 0; i < 13; i++) await log.append('s', says(`event ${i} ${'x'.repeat(200)}`, 1));
  const anchor = await log.anchor('s');
  expect(anchor.seq).toBe(13);
  await log.close();
  return anchor;
};

const walFile = async (): Promise<string> => {
  const name = (await readdir(dir)).find((f) => f.endsWith('.log'));
  if (!name) throw new Error('no LevelDB write-ahead log found');
  return join(dir, name);
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

/** Rewrites session `s` from `fromSeq` on as an attacker without the chain key would: edit, then re-seal with plain sha256. */
const rewriteChain = async (fromSeq: number, edit: (event: Record<string, unknown>) => void): Promise<void> =>
  tamper(async (db) => {
    let prevHash = GENESIS_HASH;
    let seq = 1;
    for (;;) {
      const text = await db.get(eventKey('s', seq));
      if (text === undefined) break;
      const event = JSON.parse(text) as Record<string, unknown>;
      if (seq >= fromSeq) {
        if (seq === fromSeq) edit(event);
        event['prevHash'] = prevHash;
        delete event['hash'];
        event['hash'] = chainHash(prevHash, event);
        await db.put(eventKey('s', seq), JSON.stringify(event));
      }
      prevHash = event['hash'] as string;
      seq += 1;
    }
    await db.put(headKey('s'), JSON.stringify({ seq: seq - 1, hash: prevHash }));
  });

describe('rollback is invisible (without anchors)', () => {
  it('truncating the write-ahead log drops acknowledged events: verify alone says valid, the anchor reports rollback', async () => {
    const anchor = await writeThirteen();
    const wal = await walFile();
    await truncate(wal, Math.floor((await stat(wal)).size / 2));

    const log = await openLevelLog(dir);
    const count = await log.head('s');
    expect(count).toBeLessThan(13);
    expect(await log.verify('s')).toEqual({ valid: true, eventCount: count, firstBrokenSeq: null }); // what an unanchored chain cannot see
    const anchored = await log.verify('s', { anchors: [anchor] });
    expect(anchored).toMatchObject({ valid: false, eventCount: count, firstBrokenSeq: count + 1, rollback: true });
    expect(anchored.problem).toMatch(/^rollback: an anchor is at seq 13 but the session has \d+ events/);
    await log.close();
  });

  it('damaging 40 bytes in the middle of the write-ahead log drops events: the anchor detects it', async () => {
    const anchor = await writeThirteen();
    const wal = await walFile();
    const handle = await openFile(wal, 'r+');
    try {
      const { size } = await handle.stat();
      await handle.write(Buffer.alloc(40, 0x5a), 0, 40, Math.floor(size / 2));
    } finally {
      await handle.close();
    }
    const log = await openLevelLog(dir);
    const result = await log.verify('s', { anchors: [anchor] });
    expect(result.valid).toBe(false);
    expect(result.eventCount).toBeLessThan(13);
    await log.close();
  });

  it('an anchor from before more appends still verifies, and one that the chain does not hold fails at its seq', async () => {
    const log = await openMemoryLog({ clock: stepClock() });
    expect(await log.anchor('s')).toEqual({ seq: 0, hash: GENESIS_HASH });
    await log.append('s', says('a', 3));
    const early = await log.anchor('s');
    const pending = log.append('s', says('b', 2)); // anchor waits for pending appends
    const late = await log.anchor('s');
    await pending;
    expect(late.seq).toBe(5);
    expect(await log.verify('s', { anchors: [early, late, { seq: 0, hash: GENESIS_HASH }] })).toEqual({ valid: true, eventCount: 5, firstBrokenSeq: null });
    const forged = { seq: 2, hash: 'f'.repeat(64) };
    expect(await log.verify('s', { anchors: [forged] })).toMatchObject({ valid: false, firstBrokenSeq: 2, problem: expect.stringMatching(/does not match its anchor/) });
    for (const bad of [[{ seq: -1, hash: GENESIS_HASH }], [{ seq: 1, hash: 'nothex' }], [null], 'x', [{ seq: 1.5, hash: GENESIS_HASH }]]) {
      expect(isInvalidOptionsError(await rejectionOf(log.verify('s', { anchors: bad as unknown as Anchor[] })))).toBe(true);
    }
    await log.close();
  });

  it('a consistent rewrite of the whole chain verifies without anchors (not detectable), and fails against an anchor', async () => {
    const anchor = await writeThirteen();
    await rewriteChain(3, (event) => {
      (event['items'] as { content: string }[])[0]!.content = 'rewritten';
    });
    const log = await openLevelLog(dir);
    expect((await log.verify('s')).valid).toBe(true);
    expect(await log.verify('s', { anchors: [anchor] })).toMatchObject({ valid: false, firstBrokenSeq: 13 });
    await log.close();
  });
});

describe('keyed chain (chainKey)', () => {
  it('detects a rewrite by someone without the key, which an unkeyed chain cannot', async () => {
    await writeThirteen({ chainKey: 'k'.repeat(32) });
    const keyed = await openLevelLog(dir, { chainKey: 'k'.repeat(32) });
    expect(await keyed.verify('s')).toEqual({ valid: true, eventCount: 13, firstBrokenSeq: null });
    expect((await collectAll(keyed.read('s', { verify: true })))).toHaveLength(13);
    await keyed.close();

    await rewriteChain(5, (event) => {
      (event['items'] as { content: string }[])[0]!.content = 'rewritten';
    });
    const again = await openLevelLog(dir, { chainKey: 'k'.repeat(32) });
    const result = await again.verify('s');
    expect(result).toMatchObject({ valid: false, firstBrokenSeq: 5 }); // the first event re-sealed without the key
    expect(result.problem).toMatch(/keyed hash/);
    await again.close();
  });

  it('a keyed log does not verify with another key or without one, and appends keep the keyed chain', async () => {
    const log = await openMemoryLog({ chainKey: new Uint8Array([1, 2, 3, 4]) });
    await log.append('s', says('a', 3));
    await log.append('s', says('b', 2), { expectedSeq: 3 });
    expect((await log.verify('s')).valid).toBe(true);
    const events = await collectAll(log.read('s'));
    expect(chainHash(GENESIS_HASH, events[0] as unknown as Record<string, unknown>, new Uint8Array([1, 2, 3, 4]))).toBe(events[0]!.hash);
    expect(chainHash(GENESIS_HASH, events[0] as unknown as Record<string, unknown>)).not.toBe(events[0]!.hash);
    await log.close();
    for (const chainKey of ['', new Uint8Array(0), 42]) {
      expect(isInvalidOptionsError(await rejectionOf(openMemoryLog({ chainKey: chainKey as string })))).toBe(true);
    }
  });
  it('importStored into a keyed log takes only texts sealed with that key (an unkeyed import was accepted and then failed verify)', async () => {
    const key = new Uint8Array([5, 6, 7, 8]);
    const plain = await openMemoryLog();
    const keyed = await openMemoryLog({ chainKey: key });
    await plain.append('s', says('a', 3));
    await keyed.append('s', says('a', 3));
    const plainTexts = await collectAll(plain.readStored('s'));
    const keyedTexts = await collectAll(keyed.readStored('s'));
    const target = await openMemoryLog({ chainKey: key });
    await expect(target.importStored('s', plainTexts)).rejects.toThrow(/hash/);
    expect(await target.head('s')).toBe(0);
    expect(await target.importStored('s', keyedTexts)).toMatchObject({ imported: 3 });
    expect((await target.verify('s')).valid).toBe(true);
    const unkeyed = await openMemoryLog();
    await expect(unkeyed.importStored('s', keyedTexts)).rejects.toThrow(/hash/);
    for (const log of [plain, keyed, target, unkeyed]) await log.close();
  });
});

describe('reads do not check hashes (unless asked)', () => {
  const editContent = (seq: number, content: string) =>
    tamper(async (db) => {
      const event = JSON.parse((await db.get(eventKey('s', seq)))!) as Record<string, unknown>;
      (event['items'] as { content: string }[])[0]!.content = content;
      await db.put(eventKey('s', seq), JSON.stringify(event));
    });

  it('read with verify fails with ChainBrokenError at the first edited event, after handing out the ones before it', async () => {
    await writeThirteen();
    await editContent(7, 'edited');
    const log = await openLevelLog(dir);
    expect((await collectAll(log.read('s'))).length).toBe(13); // plain read: the edit passes silently (documented)
    const seen: number[] = [];
    const error = await rejectionOf(async () => {
      for await (const event of log.read('s', { verify: true })) seen.push(event.seq);
    });
    expect(isChainBrokenError(error)).toBe(true);
    expect((error as ChainBrokenError).seq).toBe(7);
    expect((error as Error).message).toMatch(/session "s": the hash chain is broken at seq 7: content does not match its hash/);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    // from a later seq, the first event is checked against the stored hash of the one before it
    expect((await collectAll(log.read('s', { fromSeq: 8, verify: true }))).map((e) => e.seq)).toEqual([8, 9, 10, 11, 12, 13]);
    expect(isChainBrokenError(await rejectionOf(collectAll(log.read('s', { fromSeq: 7, toSeq: 7, verify: true }))))).toBe(true);
    await log.close();
  });

  it('read with verify reports a missing event and a broken link as ChainBrokenError', async () => {
    await writeThirteen();
    await tamper((db) => db.del(eventKey('s', 4)));
    const log = await openLevelLog(dir);
    const missing = await rejectionOf(collectAll(log.read('s', { verify: true })));
    expect(missing).toMatchObject({ code: 'CHAIN_BROKEN', seq: 4 });
    const linked = await rejectionOf(collectAll(log.read('s', { fromSeq: 5, verify: true })));
    expect(linked).toMatchObject({ code: 'CHAIN_BROKEN', seq: 4, problem: 'event 4 is missing' });
    await log.close();
  });
});

describe('close() during a read', () => {
  it('ends the read with LogClosedError, not LEVEL_ITERATOR_NOT_OPEN', async () => {
    const log: SessionEventLog = await openLevelLog(dir);
    for (let i = 0; i < 6; i++) await log.append('s', says(`c${i}`, 500));
    const iterator = log.read('s')[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.seq).toBe(1);
    const closing = log.close();
    const error = await rejectionOf(async () => {
      for (;;) if ((await iterator.next()).done) throw new Error('the read finished although the log was closed');
    });
    await closing;
    expect(error).toMatchObject({ code: 'LOG_CLOSED', name: 'LogClosedError' });
    expect(isChainBrokenError(error)).toBe(false);
  });

  it('ends a verify in progress with LogClosedError', async () => {
    const log = await openLevelLog(dir);
    for (let i = 0; i < 6; i++) await log.append('s', says(`v${i}`, 500));
    const verifying = log.verify('s').then(
      (result) => result,
      (error: unknown) => error,
    );
    await new Promise((resolve) => setImmediate(resolve));
    await log.close();
    const outcome = await verifying;
    // either it finished before the close, or it ends with LogClosedError
    if ('valid' in (outcome as object)) expect(outcome).toMatchObject({ valid: true, eventCount: 3000 });
    else expect(outcome).toMatchObject({ code: 'LOG_CLOSED' });
  });
});

// A keyed session reopened without its key (or with another) refuses appends by name, and writes nothing.
const KEY = 'a key of thirty-two characters!!';
const OTHER = new Uint8Array(32).fill(7);

describe('appending to a keyed session', () => {
  it('without the key, with another key, or with a key onto an unkeyed session: refused by name, nothing written', async () => {
    const { dir, remove } = await tempDir('keyed-append');
    try {
      let log = await openLevelLog(dir, { chainKey: KEY });
      await log.append('k', says('a', 3));
      await log.close();

      // The head record says the session is keyed, by the key's id, not the key.
      const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
      await db.open();
      const record = JSON.parse((await db.get(headKey('k')))!) as Record<string, unknown>;
      await db.close();
      expect(record).toMatchObject({ seq: 3, keyId: chainKeyId(KEY) });
      expect(JSON.stringify(record)).not.toContain(KEY);

      for (const [options, mismatch] of [
        [{}, 'keyed-session-no-key'],
        [{ chainKey: OTHER }, 'other-key'],
      ] as const) {
        log = await openLevelLog(dir, options);
        const error = (await rejectionOf(log.append('k', says('b', 1)))) as ChainKeyMismatchError;
        expect(isChainKeyMismatchError(error)).toBe(true);
        expect(error).toMatchObject({ sessionId: 'k', seq: 3, mismatch });
        expect(await log.head('k')).toBe(3);
        // verify without the right key says why instead of a bare broken chain
        const verdict = await log.verify('k');
        expect(verdict.valid).toBe(false);
        expect(verdict.problem).toMatch(/the session is keyed \(chain key id [0-9a-f]{16}\)/);
        expect(verdict).toMatchObject({ firstBrokenSeq: 1, keyed: { keyId: chainKeyId(KEY), mismatch } });
        await log.close();
      }

      log = await openLevelLog(dir, { chainKey: KEY });
      await log.append('k', says('c', 1));
      expect(await log.verify('k')).toMatchObject({ valid: true, eventCount: 4 });
      await log.append('plain-by-mistake', says('p', 1));
      await log.close();

      log = await openLevelLog(dir);
      await log.append('plain', says('p', 2));
      await log.close();
      log = await openLevelLog(dir, { chainKey: KEY });
      const error = (await rejectionOf(log.append('plain', says('q', 1)))) as ChainKeyMismatchError;
      expect(error).toMatchObject({ code: 'CHAIN_KEY_MISMATCH', mismatch: 'unkeyed-session-with-key' });
      expect(await log.head('plain')).toBe(2);
      await log.close();
    } finally {
      await remove();
    }
  });
});
