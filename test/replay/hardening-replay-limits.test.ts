// An untrusted recording cannot hang a replay: recorded code limits are capped, and a signal cancels it.
import { describe, expect, it } from 'vitest';
import { openMemoryLog, replaySession, type SessionEventLog } from '../../src/index.js';
import { FOREVER, forgeCodeActRecording } from '../support/forged-codeact.js';

const forgedRecording = async (forgedTimeoutMs: number, code = 'while(true){}'): Promise<{ log: SessionEventLog; id: string }> => {
  const log = await openMemoryLog();
  return { log, id: await forgeCodeActRecording(log, forgedTimeoutMs, code) };
};


describe('replay of an untrusted recording', () => {
  it('caps a forged code time limit at maxCodeTimeoutMs and reports the step as a divergence', async () => {
    const { log, id } = await forgedRecording(FOREVER);
    const result = await replaySession(log, id, { mode: 'rerun', maxCodeTimeoutMs: 200 });
    expect(result.identical).toBe(false);
    expect(result.divergentStepNumbers).toContain(1);
    expect(result.firstDivergence).toMatchObject({ type: 'tool.result', step: 1 });
    expect(result.notes.join('\n')).toMatch(/code limit of 2147483647 ms was capped at 200 ms/);
    expect(result.notes.join('\n')).toMatch(/step 1: the code ran into the replay's cap/);
  }, 10_000);

  it('a cap that is not reached changes nothing: the recording replays identically', async () => {
    const { log, id } = await forgedRecording(150);
    expect((await replaySession(log, id, { mode: 'rerun', maxCodeTimeoutMs: 200 })).identical).toBe(true);
    const quick = await forgedRecording(60_000, 'return 6 * 7');
    const result = await replaySession(quick.log, quick.id, { mode: 'rerun', maxCodeTimeoutMs: 200 });
    expect(result).toMatchObject({ identical: true });
    expect(result.notes.join('\n')).toMatch(/capped at 200 ms/);
  }, 10_000);

  it('a signal cancels a re-run while the code runs, and a project replay before it reads', async () => {
    const { log, id } = await forgedRecording(FOREVER);
    const started = Date.now();
    await expect(replaySession(log, id, { mode: 'rerun', maxCodeTimeoutMs: 60_000, signal: AbortSignal.timeout(300) })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(Date.now() - started).toBeLessThan(8_000);
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(replaySession(log, id, { signal: controller.signal })).rejects.toThrow('stop');
  }, 10_000);

  it('maxCodeTimeoutMs must be a positive number', async () => {
    const { log, id } = await forgedRecording(150);
    await expect(replaySession(log, id, { mode: 'rerun', maxCodeTimeoutMs: 0 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});
