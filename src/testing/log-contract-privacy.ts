// The privacy part of the SessionEventLog contract: redact before append, erase, deleteSession (issue 22).
import { InvalidOptionsError } from '../base/errors.js';
import type { NewSessionEvent, SessionEvent } from '../events/index.js';
import { ERASED_PLACEHOLDER, ErasureRefusedError, RedactionError, secretRedactor, type SessionEventLog } from '../log/index.js';
import { foldMemory } from '../memory/index.js';
/** The parts of the contract suite's harness and assertion these tests use (log-contract.ts passes its own). */
interface ContractAssertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toMatch(expected: string | RegExp): void;
  toContain(item: unknown): void;
  toBeUndefined(): void;
  toBeGreaterThanOrEqual(expected: number): void;
}
interface LogHarnessStore {
  open(options?: { readonly redact?: import('../log/index.js').Redactor }): Promise<SessionEventLog>;
  reopen?(): Promise<SessionEventLog>;
  tamper?(sessionId: string, seq: number, edit: (stored: string) => string): Promise<SessionEventLog>;
  cleanup(): Promise<void>;
}
interface SessionEventLogHarness {
  create(): LogHarnessStore | Promise<LogHarnessStore>;
  readonly persistent?: boolean;
  readonly tamperable?: boolean;
}

type Test = (title: string, body: (harness: LogHarnessStore) => Promise<void>) => void;

const collect = async <T>(iterable: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const value of iterable) out.push(value);
  return out;
};

const rejectionOf = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but it resolved');
};

const SECRET = 'Zq8-unique-secret-value-7Hk2Lm9';
const input = (text: string): NewSessionEvent => ({ type: 'user.input', items: [{ type: 'message', role: 'user', content: text }] });
const tool = (callId: string, output: string): NewSessionEvent => ({ type: 'tool.result', callId, output });

const writeFive = async (log: SessionEventLog, id = 's'): Promise<readonly SessionEvent[]> =>
  log.append(id, [input('hello'), { type: 'model.output', items: [{ type: 'function_call', call_id: 'c1', name: 'cat', arguments: '{"path":".env"}' }] }, tool('c1', `TOKEN=${SECRET}`), input('thanks'), input(`again ${SECRET}`)]);

/** Registers the privacy tests inside the contract's describe. */
export const describePrivacyContract = (describe: (name: string, body: () => void) => void, test: Test, expect: (actual: unknown) => ContractAssertion, suite: SessionEventLogHarness): void => {
  describe('erase and deleteSession', () => {
    test('erase by seq keeps the chain valid, reports the erased seqs, keeps anchors, and appends event.erased', async (harness) => {
      const log = await harness.open();
      const written = await writeFive(log);
      const anchor = await log.anchor('s');
      const result = await log.erase('s', { seqs: [3, 5] }, { reason: 'secret read from .env', by: 'ops' });
      expect(result).toEqual({ erased: [3, 5], seq: 6 });
      expect(await log.verify('s')).toEqual({ valid: true, eventCount: 6, firstBrokenSeq: null, erased: [3, 5] });
      expect((await log.verify('s', { anchors: [anchor] })).valid).toBe(true);
      const events = await collect(log.read('s', { verify: true }));
      expect(events[0]).toEqual(written[0]);
      expect(events[3]).toEqual(written[3]);
      const three = events[2] as SessionEvent & { output: string; callId: string };
      expect(three.type).toBe('tool.result');
      expect(three.callId).toBe('c1');
      expect(three.output).toBe(ERASED_PLACEHOLDER);
      expect(three.hash).toBe(written[2]?.hash);
      expect(three.erased).toMatchObject({ seq: 6, reason: 'secret read from .env', by: 'ops' });
      expect(events[5]).toMatchObject({ type: 'event.erased', seqs: [3, 5], reason: 'secret read from .env', by: 'ops' });
      const texts = await collect(log.readStored('s'));
      expect(texts.join('\n').includes(SECRET)).toBe(false);
      const [next] = await log.append('s', [input('after')], { expectedSeq: 6 });
      expect(next?.seq).toBe(7);
      expect((await log.verify('s')).valid).toBe(true);
    });

    test('erase by item id and by all; erasing again is a no-op; event.erased events are kept', async (harness) => {
      const log = await harness.open();
      await writeFive(log);
      expect(await log.erase('s', { itemIds: ['2:0'] }, { reason: 'r1' })).toEqual({ erased: [2], seq: 6 });
      const two = (await collect(log.read('s', { fromSeq: 2, toSeq: 2 })))[0] as unknown as { items: { call_id: string; name: string; arguments: string }[] };
      expect(two.items[0]).toMatchObject({ type: 'function_call', call_id: 'c1', name: 'cat', arguments: ERASED_PLACEHOLDER });
      expect(await log.erase('s', { seqs: [2] }, { reason: 'again' })).toEqual({ erased: [], seq: undefined });
      expect(await log.head('s')).toBe(6);
      expect(await log.erase('s', { all: true }, { reason: 'everything' })).toEqual({ erased: [1, 3, 4, 5], seq: 7 });
      const verified = await log.verify('s');
      expect(verified).toEqual({ valid: true, eventCount: 7, firstBrokenSeq: null, erased: [1, 2, 3, 4, 5] });
      expect((await collect(log.readStored('s'))).join('\n').includes(SECRET)).toBe(false);
    });

    test('erase by item id scrubs the copies later events hold: a rewind\'s memory, a restore, a recall\'s answer, digests over it', async (harness) => {
      const log = await harness.open();
      const secretItem = { type: 'function_call_output', call_id: 'c1', output: `TOKEN=${SECRET}` };
      const memoryAtTwo = {
        entries: [
          { id: '1:0', item: { type: 'message', role: 'user', content: 'hello' } },
          { id: '2:0', item: secretItem },
        ],
        summary: null,
        summaryId: null,
        facts: [],
        readFiles: [],
        modifiedFiles: [],
        lastCompaction: null,
        blocks: [],
        blocksId: null,
      };
      await log.append('c', [
        input('hello'),
        tool('c1', `TOKEN=${SECRET}`),
        input('later'),
        { type: 'session.rewound', toSeq: 2, memory: memoryAtTwo },
        { type: 'memory.restored', items: [{ type: 'message', role: 'user', content: 'hello' }, secretItem] },
        { type: 'memory.recalled', ids: ['2:0'], callId: 'r1' },
        tool('r1', `Item 2:0: function_call_output\nTOKEN=${SECRET}`),
        { type: 'context.projected', projector: { name: 'DefaultContextProjector', settings: {} }, budget: {}, report: { sourceItemCount: 3, projectedItemCount: 3, droppedItemCount: 0, sourceApproxChars: 1, projectedApproxChars: 1, itemLimitApplied: false, characterLimitApplied: false, notes: [] }, fateRuns: 'kept:tail*3', digest: 'a'.repeat(64) },
        input('unrelated'),
      ]);
      const anchor = await log.anchor('c');
      expect((await collect(log.readStored('c'))).join('\n').includes(SECRET)).toBe(true); // the check below can fail
      const result = await log.erase('c', { itemIds: ['2:0'] }, { reason: 'token in a tool result', by: 'ops' });
      expect(result).toEqual({ erased: [2], seq: 10, copies: [4, 5, 7, 8] });
      expect((await collect(log.readStored('c'))).join('\n').includes(SECRET)).toBe(false);
      expect(await log.verify('c', { anchors: [anchor] })).toEqual({ valid: true, eventCount: 10, firstBrokenSeq: null, erased: [2], copies: [4, 5, 7, 8] });
      const events = await collect(log.read('c', { verify: true }));
      const rewound = events[3] as unknown as { memory: typeof memoryAtTwo; erased: Record<string, unknown> };
      expect(rewound.memory.entries).toEqual([memoryAtTwo.entries[0], { id: '2:0', item: { type: 'function_call_output', call_id: 'c1', output: ERASED_PLACEHOLDER } }]);
      expect(rewound.erased).toMatchObject({ seq: 10, reason: 'token in a tool result', by: 'ops', copy: true });
      expect((events[4] as unknown as { items: unknown[] }).items).toEqual([{ type: 'message', role: 'user', content: 'hello' }, { type: 'function_call_output', call_id: 'c1', output: ERASED_PLACEHOLDER }]);
      expect(events[4]?.erased).toMatchObject({ copy: true, items: ['5:1'] });
      expect(events[6]).toMatchObject({ type: 'tool.result', callId: 'r1', output: ERASED_PLACEHOLDER, erased: { copy: true, items: ['7:0'] } });
      expect(events[7]).toMatchObject({ type: 'context.projected', digest: ERASED_PLACEHOLDER });
      expect(events[8]).toEqual((await collect(log.read('c', { fromSeq: 9, toSeq: 9 })))[0]);
      expect(events[8]?.erased).toBeUndefined();
      expect(events[9]).toMatchObject({ type: 'event.erased', seqs: [2], copies: [{ seq: 4 }, { seq: 5, items: ['5:1'] }, { seq: 7, items: ['7:0'] }, { seq: 8 }] });
      // the salt goes with the content
      for (const event of events.slice(0, 8)) if (event.erased !== undefined) expect(event.contentSalt).toBeUndefined();
      // memory at the head (the restore) and after the rewind show the placeholder, nowhere the secret
      const head = foldMemory(events);
      expect(head.entries.slice(0, 3).map((e) => e.item)).toEqual([
        { type: 'message', role: 'user', content: 'hello' },
        { type: 'function_call_output', call_id: 'c1', output: ERASED_PLACEHOLDER },
        { type: 'function_call_output', call_id: 'r1', output: ERASED_PLACEHOLDER },
      ]);
      expect(JSON.stringify(head).includes(SECRET)).toBe(false);
      expect(JSON.stringify(foldMemory(events.slice(0, 4))).includes(SECRET)).toBe(false);
      expect(JSON.stringify(foldMemory(events.slice(0, 4))).includes(ERASED_PLACEHOLDER)).toBe(true);
      // erasing again finds nothing new; the copies stay as they are
      expect(await log.erase('c', { itemIds: ['2:0'] }, { reason: 'again' })).toEqual({ erased: [], seq: undefined });
      if (suite.persistent && harness.reopen) {
        await log.close();
        const again = await harness.reopen();
        expect((await again.verify('c')).valid).toBe(true);
        expect((await collect(again.readStored('c'))).join('\n').includes(SECRET)).toBe(false);
      }
    });

    test('erase refuses an item id whose index names no item of its event, and writes nothing', async (harness) => {
      const log = await harness.open();
      await writeFive(log);
      for (const id of ['3:1', '3:99', '1:1']) {
        const error = await rejectionOf(log.erase('s', { itemIds: ['1:0', id] }, { reason: 'r' }));
        expect(ErasureRefusedError.isInstance(error)).toBe(true);
        expect((error as Error).message).toMatch(new RegExp(`item ${id} is not an item of that event`));
      }
      expect(await log.head('s')).toBe(5);
      expect((await collect(log.read('s'))).some((e) => e.erased !== undefined)).toBe(false);
      expect(await log.erase('s', { itemIds: ['3:0'] }, { reason: 'r' })).toEqual({ erased: [3], seq: 6 });
    });

    test('a version-2 event carries a random content salt that is hashed into its digest; erasure removes it', async (harness) => {
      const log = await harness.open();
      const [a, b] = await log.append('salted', [input(`short ${SECRET}`), input(`short ${SECRET}`)]);
      if (a?.contentDigest === undefined) return; // a store writing chain version 1
      expect(a.contentSalt).toMatch(/^[0-9a-f]{32,}$/);
      expect(a.contentSalt === b?.contentSalt).toBe(false);
      expect(a.contentDigest === b?.contentDigest).toBe(false); // same payload, different salt
      expect((await collect(log.read('salted')))[0]).toEqual(a);
      await log.erase('salted', { seqs: [1] }, { reason: 'r' });
      const [erased] = await collect(log.read('salted', { toSeq: 1 }));
      expect(erased?.contentDigest).toBe(a.contentDigest);
      expect(erased?.contentSalt).toBeUndefined();
      expect((await collect(log.readStored('salted', { toSeq: 1 }))).join('').includes(a.contentSalt as string)).toBe(false);
      expect((await log.verify('salted')).valid).toBe(true);
    });

    test('erase refuses bad input and writes nothing', async (harness) => {
      const log = await harness.open();
      await writeFive(log);
      expect(InvalidOptionsError.isInstance(await rejectionOf(log.erase('s', { seqs: [1] }, { reason: '' })))).toBe(true);
      expect(InvalidOptionsError.isInstance(await rejectionOf(log.erase('s', { seqs: [0] }, { reason: 'r' })))).toBe(true);
      expect(InvalidOptionsError.isInstance(await rejectionOf(log.erase('s', { itemIds: ['x'] }, { reason: 'r' })))).toBe(true);
      expect(InvalidOptionsError.isInstance(await rejectionOf(log.erase('s', {} as never, { reason: 'r' })))).toBe(true);
      const past = await rejectionOf(log.erase('s', { seqs: [9] }, { reason: 'r' }));
      expect(ErasureRefusedError.isInstance(past)).toBe(true);
      expect((past as Error).message).toMatch(/seq 9/);
      expect(ErasureRefusedError.isInstance(await rejectionOf(log.erase('nobody', { all: true }, { reason: 'r' })))).toBe(true);
      await log.erase('s', { seqs: [1] }, { reason: 'r' });
      expect(ErasureRefusedError.isInstance(await rejectionOf(log.erase('s', { seqs: [6] }, { reason: 'r' })))).toBe(true);
      expect(await log.head('s')).toBe(6);
      expect(await collect(log.sessions())).toEqual(['s']);
    });

    test('erase deletes checkpoints at or after the first erased seq and keeps earlier ones', async (harness) => {
      const log = await harness.open();
      const written = await writeFive(log);
      await log.putCheckpoint('s', { seq: 2, hash: written[1]?.hash ?? '', data: { at: 2 } }, { band: 1 });
      await log.putCheckpoint('s', { seq: 4, hash: written[3]?.hash ?? '', data: { secret: SECRET } }, { band: 1 });
      await log.erase('s', { seqs: [3] }, { reason: 'r' });
      expect(await log.latestCheckpoint('s')).toEqual({ seq: 2, hash: written[1]?.hash, data: { at: 2 } });
    });

    test('deleteSession removes events, checkpoints and the head record; other sessions stay', async (harness) => {
      const log = await harness.open();
      const written = await writeFive(log, 'gone');
      await writeFive(log, 'kept');
      await log.putCheckpoint('gone', { seq: 5, hash: written[4]?.hash ?? '', data: {} });
      expect(await log.deleteSession('gone')).toEqual({ deleted: 5 });
      expect(await log.head('gone')).toBe(0);
      expect(await collect(log.read('gone'))).toEqual([]);
      expect(await log.latestCheckpoint('gone')).toBeUndefined();
      expect(await collect(log.sessions())).toEqual(['kept']);
      expect(await log.verify('gone')).toEqual({ valid: true, eventCount: 0, firstBrokenSeq: null });
      expect((await log.verify('kept')).valid).toBe(true);
      expect(await log.deleteSession('gone')).toEqual({ deleted: 0 });
      const [first] = await log.append('gone', [input('new life')], { expectedSeq: 0 });
      expect(first?.seq).toBe(1);
      expect((await log.verify('gone')).valid).toBe(true);
    });

    test('an erased session copies to another store and verifies there with the same erasures', async (harness) => {
      const log = await harness.open();
      await writeFive(log, 'from');
      await log.erase('from', { seqs: [3] }, { reason: 'r' });
      const texts = await collect(log.readStored('from'));
      const other = await suite.create();
      try {
        const target = await other.open();
        expect(await target.importStored('from', texts)).toEqual({ imported: 6, head: 6 });
        expect(await target.verify('from')).toEqual({ valid: true, eventCount: 6, firstBrokenSeq: null, erased: [3] });
      } finally {
        await other.cleanup();
      }
    });

    test('redact: the built-in redactor replaces secrets before they are stored, and a throwing redactor writes nothing', async (harness) => {
      const log = await harness.open({ redact: secretRedactor() });
      const key = `sk-proj-${'a1B2c3D4e5F6g7H8i9J0'.repeat(2)}`;
      const [event] = await log.append('r', [tool('c1', `OPENAI_API_KEY=${key}\nDEBUG=1`)]);
      expect((event as unknown as { output: string }).output).toBe('OPENAI_API_KEY=[redacted:openai-api-key]\nDEBUG=1');
      expect(event?.redactions).toEqual([{ path: 'output', rule: 'openai-api-key' }]);
      expect(await collect(log.read('r'))).toEqual([event]);
      expect((await collect(log.readStored('r'))).join('').includes(key)).toBe(false);
      if (suite.persistent && harness.reopen) {
        await log.close();
        const plain = await harness.open({
          redact: () => {
            throw new Error('boom');
          },
        });
        const error = await rejectionOf(plain.append('r', [input('x')]));
        expect(RedactionError.isInstance(error)).toBe(true);
        expect((error as Error).message).toMatch(/boom/);
        expect(await plain.head('r')).toBe(1);
      }
    });

    if (suite.tamperable) {
      test('verify fails for an event marked erased that no event.erased names', async (harness) => {
        const first = await harness.open();
        await writeFive(first);
        if (!harness.tamper) throw new Error('a tamperable harness needs tamper()');
        const log = await harness.tamper('s', 2, (text) => {
          const raw = JSON.parse(text) as Record<string, unknown>;
          const { hash, ...rest } = raw;
          const items = (rest['items'] as { type: string }[]).map((item) => ({ ...item, arguments: ERASED_PLACEHOLDER }));
          return JSON.stringify({ ...rest, items, erased: { seq: 3, at: 'x', reason: 'forged' }, hash });
        });
        const result = await log.verify('s');
        expect(result.valid).toBe(false);
        expect(result.firstBrokenSeq).toBe(2);
      });

      test('verify fails for an event scrubbed of copies whose remaining content was changed afterwards', async (harness) => {
        const first = await harness.open();
        await first.append('s', [input('hello'), tool('c1', `TOKEN=${SECRET}`), { type: 'memory.restored', items: [{ type: 'message', role: 'user', content: 'kept text' }, { type: 'function_call_output', call_id: 'c1', output: `TOKEN=${SECRET}` }] }]);
        expect(await first.erase('s', { itemIds: ['2:0'] }, { reason: 'r' })).toEqual({ erased: [2], seq: 4, copies: [3] });
        expect((await first.verify('s')).valid).toBe(true);
        if (!harness.tamper) throw new Error('a tamperable harness needs tamper()');
        const log = await harness.tamper('s', 3, (text) => text.replace('kept text', 'forged text'));
        const result = await log.verify('s');
        expect(result.valid).toBe(false);
        expect(result.firstBrokenSeq).toBe(3);
        expect(result.problem).toMatch(/scrubbed of copies/);
      });
    }
  });
};
