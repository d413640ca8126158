// session.checkpoint(): a checkpoint on purpose, for a session opened often and never appended to; opening never writes.
import { describe, expect, it } from 'vitest';
import { openMemoryLog, openSession } from '../../src/index.js';

describe('session.checkpoint()', () => {
  it('opening a long session writes nothing; checkpoint() stores one, and later opens fold only what follows', async () => {
    const log = await openMemoryLog();
    const writer = await openSession(log, { id: 's', checkpointEvery: 0 });
    for (let i = 0; i < 40; i++) await writer.memory.addUserInput(`input ${i}`);
    const head = await log.head('s');
    const reader = await openSession(log, { id: 's' });
    expect(reader.opened).toMatchObject({ from: 'full-fold', eventsFolded: head });
    expect(await log.head('s')).toBe(head); // a read path never writes on its own
    expect(await reader.checkpoint()).toEqual({ seq: head + 1, taken: true });
    expect(await reader.checkpoint()).toEqual({ seq: head + 1, taken: false });
    expect(await (await openSession(log, { id: "s" })).checkpoint()).toEqual({ seq: head + 1, taken: false });
    const again = await openSession(log, { id: 's' });
    expect(again.opened.from).toEqual({ checkpointSeq: head + 1 });
    expect(again.opened.eventsFolded).toBe(0);
    expect(again.memory.getItems()).toEqual(writer.memory.getItems());
  });
});
