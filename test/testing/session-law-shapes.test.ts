// checkSessionLaws returns the violations; assertSessionLaws throws them, one line each (the check/assert naming of DESIGN's laws).
import { describe, expect, it } from 'vitest';
import { Agents, ScriptedModelClient, assistantMessage, openMemoryLog, type SessionEvent } from '../../src/index.js';
import { assertSessionLaws, checkSessionLaws } from '../../src/testing/index.js';

const recorded = async (): Promise<SessionEvent[]> => {
  const log = await openMemoryLog();
  const agent = Agents.react({ modelClient: new ScriptedModelClient([{ outputText: 'hi', items: [assistantMessage('hi')] }]), model: 'm', log });
  const session = await agent.newSession();
  await session.run('hello');
  const events: SessionEvent[] = [];
  for await (const e of log.read(session.id)) events.push(e);
  await log.close();
  return events;
};

describe('session law shapes', () => {
  it('a lawful session: check returns [] and assert does not throw', async () => {
    const events = await recorded();
    expect(checkSessionLaws(events)).toEqual([]);
    expect(() => assertSessionLaws(events)).not.toThrow();
  });

  it('a tampered projection digest: check lists it and assert throws naming the law and seq', async () => {
    const events = (await recorded()).map((e) => (e.type === 'context.projected' ? { ...e, digest: 'sha256:tampered' } : e)) as SessionEvent[];
    const violations = checkSessionLaws(events);
    expect(violations.length).toBeGreaterThan(0);
    const first = violations[0]!;
    expect(() => assertSessionLaws(events)).toThrow(`law ${first.law} at seq ${first.seq}`);
  });
});
