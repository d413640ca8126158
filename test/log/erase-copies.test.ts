// Each kind of copy an erase scrubs (decision 0030), one by one: a compaction's inline items and summarizer request, an
// approval's arguments, a final answer, projection, request and checkpoint digests (also one an earlier erase kept).
import { describe, expect, it } from 'vitest';
import { ERASED_PLACEHOLDER, openMemoryLog, type SessionEventLog } from '../../src/log/index.js';
import type { NewSessionEvent, SessionEvent } from '../../src/events/index.js';
import { foldSession } from '../../src/session/index.js';
import { collectAll } from './support.js';

const SECRET = 'sk-copy-test-Zq81LmP0';
const report = { sourceItemCount: 1, projectedItemCount: 1, droppedItemCount: 0, sourceApproxChars: 1, projectedApproxChars: 1, itemLimitApplied: false, characterLimitApplied: false, notes: [] };
const projected = (step: number): NewSessionEvent => ({
  type: 'context.projected',
  step,
  runId: 'r1',
  projector: { name: 'DefaultContextProjector', settings: {} },
  budget: {},
  report,
  fateRuns: 'kept:tail*2',
  digest: 'd'.repeat(64),
  tokenCounts: { ['e'.repeat(64)]: 3 },
});
const requested = (step: number): NewSessionEvent => ({ type: 'model.requested', step, runId: 'r1', model: 'm', itemCount: 2, digest: 'd'.repeat(64) });

const stored = async (log: SessionEventLog, id: string): Promise<string> => (await collectAll(log.readStored(id))).join('\n');
const bySeq = async (log: SessionEventLog, id: string): Promise<Map<number, SessionEvent & Record<string, unknown>>> =>
  new Map((await collectAll(log.read(id, { verify: true }))).map((e) => [e.seq, e as SessionEvent & Record<string, unknown>]));

describe('erase scrubs each kind of copy', () => {
  it("a framework's history edit (memory.edited): its inline items are erasable by id, and copies in a later edit are scrubbed", async () => {
    const log = await openMemoryLog();
    const secretItem = { type: 'message', role: 'user', content: `my key is ${SECRET}` };
    await log.append('e', [
      { type: 'user.input', items: [{ type: 'message', role: 'user', content: 'hello' }] }, // 1
      { type: 'memory.edited', editor: 'openai-agents:applyHistoryTransaction', kind: 'append_items', layout: [{ keep: '1:0' }, { item: secretItem }], droppedIds: [] }, // 2
      { type: 'memory.edited', editor: 'openai-agents:applyHistoryMutations', kind: 'replace_suffix', layout: [{ keep: '1:0' }, { item: secretItem, replaces: '2:1' }], droppedIds: ['2:1'] }, // 3
    ]);
    expect((await stored(log, 'e')).includes(SECRET)).toBe(true);
    const result = await log.erase('e', { itemIds: ['2:1'] }, { reason: 'key' });
    expect(result).toMatchObject({ erased: [2], copies: [3] });
    expect((await stored(log, 'e')).includes(SECRET)).toBe(false);
    expect((await log.verify('e')).valid).toBe(true);
    const events = await collectAll(log.read('e'));
    expect(foldSession(events).memory.entries.map((e) => [e.id, (e.item as { content?: unknown }).content])).toEqual([
      ['1:0', 'hello'],
      ['3:1', ERASED_PLACEHOLDER],
    ]);
    // An item id past an edit's layout names no item: refused, nothing written.
    await expect(log.erase('e', { itemIds: ['2:9'] }, { reason: 'x' })).rejects.toMatchObject({ code: 'ERASURE_REFUSED' });
  });

  it("a compaction's inline items (standing for the item, or equal to it) and the summarizer request that quoted it", async () => {
    const log = await openMemoryLog();
    const secretItem = { type: 'message', role: 'user', content: `my key is ${SECRET}` };
    await log.append('c', [
      { type: 'user.input', items: [secretItem] }, // 1
      { type: 'model.output', items: [{ type: 'message', role: 'assistant', content: 'noted' }] }, // 2
      {
        type: 'memory.compacted', // 3
        trigger: 'manual',
        policy: { name: 'LlmCompactPolicy', settings: {} },
        layout: [{ item: { type: 'message', role: 'user', content: '[summarised]' }, replaces: '1:0' }, { item: secretItem }, { keep: '2:0' }],
        keptIds: ['2:0'],
        droppedIds: ['1:0'],
        summary: 'the user gave a key',
        result: { summary: 'the user gave a key', completed: [], pending: [], decisions: [], changedArtifacts: [], failedCommands: [], testResults: [], userConfirmations: [], sandboxState: [], openQuestions: [], readFiles: [], modifiedFiles: [] },
        summarizer: { request: { calls: [{ request: { items: [{ type: 'message', role: 'user', content: `summarise: user: my key is ${SECRET}` }] }, rawAnswer: 'the user gave a key' }] }, rawAnswer: 'the user gave a key' },
      },
    ]);
    expect((await stored(log, 'c')).includes(SECRET)).toBe(true);
    const result = await log.erase('c', { itemIds: ['1:0'] }, { reason: 'key' });
    expect(result).toMatchObject({ erased: [1], copies: [3] });
    expect((await stored(log, 'c')).includes(SECRET)).toBe(false);
    const compacted = (await bySeq(log, 'c')).get(3)!;
    expect(compacted['layout']).toEqual([
      { item: { type: 'message', role: 'user', content: ERASED_PLACEHOLDER }, replaces: '1:0' },
      { item: { type: 'message', role: 'user', content: ERASED_PLACEHOLDER } },
      { keep: '2:0' },
    ]);
    expect(compacted['summary']).toBe('the user gave a key'); // derived text is not recognised (docs/privacy.md)
    expect(compacted['summarizer']).toEqual({ request: { calls: [{ request: { items: [{ type: 'message', role: 'user', content: ERASED_PLACEHOLDER }] }, rawAnswer: 'the user gave a key' }] }, rawAnswer: 'the user gave a key' });
    expect(compacted.erased).toMatchObject({ copy: true, items: ['3:0', '3:1'] });
    expect(foldSession(await collectAll(log.read('c'))).memory.entries.map((e) => e.id)).toEqual(['3:0', '3:1', '2:0']);
    expect((await log.verify('c')).valid).toBe(true);
  });

  it("an approval's arguments of an erased call, a final answer equal to an erased one, and the digests of the steps that held it", async () => {
    const log = await openMemoryLog();
    await log.append('a', [
      { type: 'run.started', runId: 'r1' }, // 1
      { type: 'step.started', runId: 'r1', step: 1 }, // 2
      { type: 'user.input', items: [{ type: 'message', role: 'user', content: 'deploy' }] }, // 3
      projected(1), // 4
      requested(1), // 5
      { type: 'model.responded', step: 1, runId: 'r1', items: [{ type: 'function_call', call_id: 'c1', name: 'deploy', arguments: `{"token":"${SECRET}"}` }] }, // 6
      { type: 'approval.requested', callId: 'c1', name: 'deploy', arguments: `{"token":"${SECRET}"}`, step: 1, runId: 'r1' }, // 7
      { type: 'checkpoint.taken', digest: 'c'.repeat(64), checkpointEvery: 5 }, // 8
      { type: 'step.ended', runId: 'r1', step: 1 }, // 9
      { type: 'step.started', runId: 'r1', step: 2 }, // 10
      projected(2), // 11
      requested(2), // 12
      { type: 'model.responded', step: 2, runId: 'r1', outputText: `done with ${SECRET}`, items: [{ type: 'message', role: 'assistant', content: `done with ${SECRET}` }] }, // 13
      { type: 'run.finished', runId: 'r1', steps: 2, outputText: `done with ${SECRET}` }, // 14
    ]);
    const before = await bySeq(log, 'a');
    expect((await log.erase('a', { seqs: [6, 13] }, { reason: 'token' })).copies).toEqual([7, 8, 11, 12, 14]);
    const after = await bySeq(log, 'a');
    expect(after.get(7)).toMatchObject({ callId: 'c1', name: 'deploy', arguments: ERASED_PLACEHOLDER, erased: { copy: true } });
    expect(after.get(14)).toMatchObject({ outputText: ERASED_PLACEHOLDER, steps: 2 });
    expect(after.get(8)?.['digest']).toBe(ERASED_PLACEHOLDER);
    // step 1 was projected before the call entered memory: its digests stay; step 2's held it
    expect(after.get(4)).toEqual(before.get(4));
    expect(after.get(5)).toEqual(before.get(5));
    expect(after.get(11)).toMatchObject({ digest: ERASED_PLACEHOLDER, erased: { copy: true } });
    expect(after.get(11)?.['tokenCounts']).toBeUndefined();
    expect(after.get(12)).toMatchObject({ digest: ERASED_PLACEHOLDER, erased: { copy: true } });
    expect((await stored(log, 'a')).includes(SECRET)).toBe(false);
    expect(await log.verify('a')).toMatchObject({ valid: true, erased: [6, 13], copies: [7, 8, 11, 12, 14] });
  });

  it('a projection digest an earlier erase kept (as structure) goes when content its step held is erased later; the event keeps its own mark', async () => {
    const log = await openMemoryLog();
    await log.append('b', [
      { type: 'run.started', runId: 'r1' }, // 1
      { type: 'step.started', runId: 'r1', step: 1 }, // 2
      { type: 'tool.result', callId: 'c1', output: `TOKEN=${SECRET}` }, // 3
      projected(1), // 4
      requested(1), // 5
    ]);
    const first = await log.erase('b', { seqs: [4] }, { reason: 'the projection itself' });
    const erasedProjection = (await bySeq(log, 'b')).get(4)!;
    expect(erasedProjection['digest']).toBe('d'.repeat(64)); // structure, kept by a full erase
    expect(erasedProjection['tokenCounts']).toBeUndefined(); // keyed by text digests: content
    const second = await log.erase('b', { itemIds: ['3:0'] }, { reason: 'the token' });
    expect(second.copies).toEqual([4, 5]);
    const after = await bySeq(log, 'b');
    expect(after.get(4)).toMatchObject({ digest: ERASED_PLACEHOLDER, erased: { seq: first.seq, reason: 'the projection itself' } });
    expect(after.get(4)?.erased?.copy).toBeUndefined();
    expect(after.get(5)).toMatchObject({ digest: ERASED_PLACEHOLDER, erased: { seq: second.seq, copy: true } });
    expect(await log.verify('b')).toMatchObject({ valid: true, erased: [3, 4], copies: [5] });
  });
});
