// Which session a CLI command means: an exact id, a unique prefix, --last; and agent.newSession({ id }).
import { describe, expect, it } from 'vitest';
import { Agents, ScriptedModelClient, assistantMessage, openMemoryLog, userMessage } from '../../src/index.js';
import { lastSession, resolveSessionId } from '../../src/cli/session-id.js';

const input = { type: 'user.input' as const, items: [userMessage('hi')] };

describe('session ids in the CLI', () => {
  it('an exact id wins, a unique prefix resolves, an ambiguous one is a usage error naming the matches, none is left as is', async () => {
    let now = 0;
    const log = await openMemoryLog({ clock: () => new Date(Date.UTC(2026, 0, 1, 0, 0, ++now)) });
    for (const id of ['3f2a9c1e-aaaa', '3f2b0000-bbbb', 'abc', 'abcdef']) await log.append(id, [input]);
    expect(await resolveSessionId(log, '3f2a')).toBe('3f2a9c1e-aaaa');
    expect(await resolveSessionId(log, 'abc')).toBe('abc');
    expect(await resolveSessionId(log, 'abcd')).toBe('abcdef');
    await expect(resolveSessionId(log, '3f2')).rejects.toThrow(/prefix "3f2" is ambiguous: 2 sessions start with it \(3f2a9c1e-aaaa, 3f2b0000-bbbb\)/);
    await expect(resolveSessionId(log, '3f2')).rejects.toMatchObject({ exitCode: 2 });
    expect(await resolveSessionId(log, 'zzz')).toBe('zzz');
    // --last: the session whose last event is newest, whatever the id order.
    expect(await lastSession(log)).toBe('abcdef');
    await log.append('3f2a9c1e-aaaa', [input]);
    expect(await lastSession(log)).toBe('3f2a9c1e-aaaa');
    expect(await lastSession(await openMemoryLog())).toBeUndefined();
  });
});

describe('agent.newSession({ id })', () => {
  it('starts a session under that id, and refuses one that exists or an empty id', async () => {
    const log = await openMemoryLog();
    const agent = Agents.react({ modelClient: new ScriptedModelClient([{ outputText: 'ok', items: [assistantMessage('ok')] }]), model: 'm', log });
    const session = await agent.newSession({ id: 'ticket-4711' });
    expect(session.id).toBe('ticket-4711');
    await session.run('hello');
    expect(await log.head('ticket-4711')).toBeGreaterThan(0);
    await expect(agent.newSession({ id: 'ticket-4711' })).rejects.toThrow(/already exists in the log; use resumeSession/);
    await expect(agent.newSession({ id: '' })).rejects.toThrow(/non-empty string/);
    expect((await agent.newSession()).id).not.toBe('ticket-4711');
  });
});
