// Erasure on LevelDB: the secret's bytes leave every file of the directory, chain version 1 (the weaker form), the version-2 hashes pinned, erase beside appends.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { isInvalidEventError } from '../../src/events/index.js';
import { deterministicSalts, openLevelLog, openMemoryLog, type SessionEventLog } from '../../src/log/index.js';
import { eventKey } from '../../src/log/keys.js';
import { functionCall, userMessage } from '../../src/items/index.js';
import { memoryAt } from '../../src/replay/index.js';
import { openSession } from '../../src/session/index.js';
import { checkSessionLaws } from '../../src/testing/index.js';
import { collectAll, stepClock, tempDir } from './support.js';

let dir: string;
let remove: () => Promise<void>;
beforeEach(async () => {
  ({ dir, remove } = await tempDir('erase'));
});
afterEach(async () => {
  await remove();
});

const SECRET = 'Q9x-erase-me-7f3k2LmP0zR8';
const input = (text: string) => ({ type: 'user.input' as const, items: [{ type: 'message', role: 'user', content: text }] });

/** Whether any file of the directory holds these bytes. */
const inFiles = async (needle: string): Promise<boolean> => {
  for (const name of await readdir(dir)) {
    const bytes = await readFile(join(dir, name));
    if (bytes.includes(Buffer.from(needle))) return true;
  }
  return false;
};

const fill = async (log: SessionEventLog, id: string): Promise<void> => {
  await log.append(id, [input('before')]);
  await log.append(id, [{ type: 'tool.result', callId: 'c1', output: `cat .env\nTOKEN=${SECRET}` }]);
  for (let i = 0; i < 20; i++) await log.append(id, [input(`after ${i}`)]);
};

describe('erase on LevelDB', () => {
  it('the secret is in the files before, and in no file of the directory after erase (record rewritten, then compacted)', async () => {
    const log = await openLevelLog(dir);
    await fill(log, 's');
    await fill(log, 'other');
    await log.close();
    expect(await inFiles(SECRET)).toBe(true); // the check can fail
    const again = await openLevelLog(dir);
    expect(await again.erase('s', { seqs: [2] }, { reason: 'token in tool output' })).toEqual({ erased: [2], seq: 23 });
    await again.erase('other', { itemIds: ['2:0'] }, { reason: 'token in tool output' });
    expect(await again.verify('s')).toMatchObject({ valid: true, erased: [2] });
    await again.close();
    expect(await inFiles(SECRET)).toBe(false);
    const reopened = await openLevelLog(dir);
    expect(await reopened.verify('other')).toMatchObject({ valid: true, erased: [2] });
    await reopened.close();
  });

  it('a rewind that carried the secret in its memory is scrubbed too: no file holds it, memoryAt at the head shows [erased], the laws hold', async () => {
    const secret = 'SECRET-XYZ-123';
    const log = await openLevelLog(dir);
    const s = await openSession(log, { id: 'rw', checkpointEvery: 0 });
    await s.record([{ type: 'user.input', items: [userMessage('read the env')] }]);
    await s.record([{ type: 'model.output', items: [functionCall('c1', 'cat', { path: '.env' }), functionCall('c2', 'cat', { path: 'b' })] }]);
    const [result] = await s.record([{ type: 'tool.result', callId: 'c1', name: 'cat', output: `API_TOKEN=${secret}` }]);
    const [later] = await s.record([{ type: 'tool.result', callId: 'c2', name: 'cat', output: 'nothing here' }]);
    const rewound = await s.rewind({ toSeq: later!.seq - 1 });
    await s.record([{ type: 'user.input', items: [userMessage('go on')] }]);
    for (let i = 0; i < 20; i++) await log.append('rw', [input(`filler ${i}`)]);
    const head = await log.head('rw');
    expect(JSON.stringify((await memoryAt(log, 'rw', { seq: head })).memory).includes(secret)).toBe(true);
    await log.close();
    expect(await inFiles(secret)).toBe(true); // the check can fail
    const again = await openLevelLog(dir);
    const erased = await again.erase('rw', { itemIds: [`${result!.seq}:0`] }, { reason: 'token read from .env', by: 'security' });
    expect(erased).toMatchObject({ erased: [result!.seq], copies: [rewound.seq] });
    const state = (await memoryAt(again, 'rw', { seq: await again.head('rw') })).memory;
    expect(state.entries.find((e) => e.id === `${result!.seq}:0`)?.item).toEqual({ type: 'function_call_output', call_id: 'c1', output: '[erased]' });
    expect(JSON.stringify(state).includes(secret)).toBe(false);
    const events = await collectAll(again.read('rw', { verify: true }));
    expect(JSON.stringify(events).includes(secret)).toBe(false);
    expect(checkSessionLaws(events)).toEqual([]);
    expect(await again.verify('rw')).toMatchObject({ valid: true, erased: [result!.seq], copies: [rewound.seq] });
    await again.close();
    expect(await inFiles(secret)).toBe(false);
  });

  it('deleteSession leaves none of the session in the files; sessions() no longer lists it', async () => {
    const log = await openLevelLog(dir);
    await fill(log, 'gone');
    await log.append('kept', [input('stays')]);
    expect(await log.deleteSession('gone')).toEqual({ deleted: 22 });
    expect(await collectAll(log.sessions())).toEqual(['kept']);
    await log.close();
    expect(await inFiles(SECRET)).toBe(false);
  });

  it('chain version 1 (the weaker form): erase works, verify is valid and reports the erased seq; later events are untouched', async () => {
    const log = await openLevelLog(dir, { chainVersion: 1, clock: stepClock() });
    await fill(log, 'old');
    const before = await collectAll(log.read('old'));
    const anchor = await log.anchor('old');
    await log.erase('old', { seqs: [2] }, { reason: 'r', by: 'dpo' });
    const after = await collectAll(log.read('old', { verify: true }));
    expect(after.slice(2, 22)).toEqual(before.slice(2));
    expect(after[1]).toMatchObject({ output: '[erased]', hash: before[1]?.hash, erased: { reason: 'r', by: 'dpo' } });
    expect(after[1]?.contentDigest).toBeUndefined();
    expect(await log.verify('old', { anchors: [anchor] })).toEqual({ valid: true, eventCount: 23, firstBrokenSeq: null, erased: [2] });
    await log.close();
  });

  it('version 2 is what new sessions get; its hashes are pinned; old sessions keep version 1 on append', async () => {
    const log = await openMemoryLog({ clock: stepClock(), salt: deterministicSalts('pin') });
    const [first] = await log.append('v2', [input('first')]);
    expect(first?.contentSalt).toBe(PINNED_V2_SALT);
    expect(first?.contentDigest).toBe(createHash('sha256').update(`${PINNED_V2_SALT}{"items":[{"content":"first","role":"user","type":"message"}]}`).digest('hex'));
    expect(first?.hash).toBe(PINNED_V2_FIRST);
    const old = await openMemoryLog({ clock: stepClock(), chainVersion: 1 });
    await old.append('s', [input('a')]);
    const texts = await collectAll(old.readStored('s'));
    await log.importStored('s', texts);
    const [next] = await log.append('s', [input('b')]);
    expect(next?.contentDigest).toBeUndefined();
    expect(await log.verify('s')).toEqual({ valid: true, eventCount: 2, firstBrokenSeq: null });
  });

  it('a salt source that throws or gives something else than hex fails the append with InvalidEventError (path contentSalt), nothing written; a non-function is refused at open', async () => {
    const salts = [() => { throw new Error('no entropy'); }, () => 'short', () => 'Z'.repeat(32), () => 42 as unknown as string];
    for (const salt of salts) {
      const log = await openMemoryLog({ salt });
      const error = await log.append('s', [input('x')]).then(() => undefined, (e: unknown) => e);
      expect(isInvalidEventError(error), String(error)).toBe(true);
      expect((error as { issues: { path: string }[] }).issues[0]?.path).toBe('contentSalt');
      expect(await log.head('s')).toBe(0);
      await log.close();
    }
    // a version-1 session needs no salt
    const v1 = await openMemoryLog({ chainVersion: 1, salt: () => 'short' });
    expect((await v1.append('s', [input('x')]))[0]?.contentSalt).toBeUndefined();
    await expect(openMemoryLog({ salt: 'abc' as unknown as () => string })).rejects.toThrow(/salt/);
    // the same injected salts give the same stored bytes
    const texts = async (): Promise<string[]> => {
      const log = await openMemoryLog({ clock: stepClock(), salt: deterministicSalts('same') });
      await log.append('s', [input('a'), input('b')]);
      return collectAll(log.readStored('s'));
    };
    expect(await texts()).toEqual(await texts());
  });

  it('a session keeps its version when reopened with another chainVersion', async () => {
    const log = await openLevelLog(dir, { chainVersion: 1 });
    await log.append('m', [input('a')]);
    await log.close();
    const v2 = await openLevelLog(dir, { chainVersion: 2 });
    await v2.append('m', [input('b')]);
    await v2.close();
    const { ClassicLevel } = await import('classic-level');
    const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    const second = await db.get(eventKey('m', 2));
    await db.close();
    expect(second?.includes('contentDigest')).toBe(false); // appends keep the session's version
  });

  it('erase beside concurrent appends: it runs between groups, every append lands once, the chain holds', async () => {
    const log = await openMemoryLog();
    await fill(log, 's');
    const racing = [log.append('s', [input('x1')]), log.erase('s', { seqs: [2] }, { reason: 'r' }), log.append('s', [input('x2')]), log.append('s', [input('x3')])];
    const [, erased] = (await Promise.all(racing)) as [unknown, { erased: number[]; seq: number }];
    expect(erased.erased).toEqual([2]);
    const events = await collectAll(log.read('s'));
    expect(events.filter((e) => e.type === 'event.erased').map((e) => e.seq)).toEqual([erased.seq]);
    expect(events.filter((e) => e.type === 'user.input').map((e) => (e as unknown as { items: { content: string }[] }).items[0]?.content).slice(-3).sort()).toEqual(['x1', 'x2', 'x3']);
    expect(await log.verify('s')).toMatchObject({ valid: true, eventCount: 26, erased: [2] });
  });

  it('a mixed-version session (a version-2 event after a version-1 one) does not verify', async () => {
    const v1 = await openMemoryLog({ chainVersion: 1 });
    await v1.append('m', [input('a')]);
    const v2 = await openMemoryLog({ chainVersion: 2 });
    await v2.append('other', [input('b')]);
    const [first] = await collectAll(v1.readStored('m'));
    const raw = JSON.parse((await collectAll(v2.readStored('other')))[0] as string) as Record<string, unknown>;
    const { sealEventV2 } = await import('../../src/log/hash-chain.js');
    const { hash: _h, contentDigest: _c, ...unsealed } = { ...raw, sessionId: 'm', seq: 2, prevHash: (JSON.parse(first as string) as { hash: string }).hash } as Record<string, unknown>;
    const { text } = sealEventV2(String(unsealed['prevHash']), unsealed as Record<string, unknown>);
    const target = await openMemoryLog();
    const error = await target.importStored('m', [first as string, text]).then(() => undefined, (e: unknown) => e);
    if (error === undefined) {
      expect(await target.verify('m')).toMatchObject({ valid: false, firstBrokenSeq: 2, problem: expect.stringMatching(/chain version/) });
    } else {
      expect(String(error)).toMatch(/version/);
    }
  });
});

const PINNED_V2_SALT = '74b05dd103836d89d28b67d0a0c032f9';
const PINNED_V2_FIRST = '8809b02e8fa860c9603916a72d132363c92add623663fdf90e39886258b311c7';
