// Two erasures: one takes a step's model.requested (its digest stays, as structure), a later one takes the user input
// that step's prompt held and names the request again. The later erase must still scrub the request's digest (a digest
// over erased content), as it scrubs the projection's; and the laws hold after it (found by the erasure property,
// seed 446829174: the request kept its digest, and the fate law saw two digests differ).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agents, ScriptedModelClient, assistantMessage, defineTool, functionCall, openMemoryLog, type SessionEvent } from '../../src/index.js';
import { ERASED_PLACEHOLDER } from '../../src/log/index.js';
import { auditSession } from '../../src/replay/index.js';
import { checkFateLaw, checkSessionLaws } from '../../src/testing/index.js';

const tool = defineTool({ name: 'run', description: 'Run', parameters: z.object({ text: z.string() }), execute: ({ text }) => `ran ${text}` });

describe('laws after erasure', () => {
  it('an event named again by a later erase is still scrubbed of a digest over what that erase removes; the laws hold', async () => {
    const log = await openMemoryLog();
    const agent = Agents.react({
      modelClient: new ScriptedModelClient([{ items: [functionCall('c1', 'run', { text: 'x' })] }, { outputText: 'done', items: [assistantMessage('done')] }]),
      model: 'm',
      tools: [tool],
      log,
      ids: () => 'e1',
    });
    const session = await agent.newSession();
    await session.run('the secret request');
    const events: SessionEvent[] = [];
    for await (const e of log.read(session.id)) events.push(e);
    const request = events.find((e) => e.type === 'model.requested')!;
    const input = events.find((e) => e.type === 'user.input')!;
    await log.erase(session.id, { seqs: [request.seq] }, { reason: 'first' });
    const second = await log.erase(session.id, { seqs: [input.seq, request.seq] }, { reason: 'second' });
    expect(second.erased).toEqual([input.seq]);
    expect(second.copies).toContain(request.seq);
    const after: SessionEvent[] = [];
    for await (const e of log.read(session.id, { verify: true })) after.push(e);
    const projected = after.find((e) => e.type === 'context.projected' && e.step === request.step) as SessionEvent & { digest: string };
    const requested = after.find((e) => e.seq === request.seq) as SessionEvent & { digest: string };
    expect(projected.digest).toBe(ERASED_PLACEHOLDER);
    expect(requested.digest).toBe(ERASED_PLACEHOLDER);
    // It keeps the mark of the erase that erased it.
    expect((requested as unknown as { erased: { reason: string } }).erased.reason).toBe('first');
    expect((await log.verify(session.id)).valid).toBe(true);
    expect(checkFateLaw(after, await auditSession(log, session.id))).toEqual([]);
    expect(checkSessionLaws(after)).toEqual([]);
  });
});
