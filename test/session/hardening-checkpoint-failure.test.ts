// A checkpoint that fails after its append committed never rejects that append; it is reported apart and tried again.
import { describe, expect, it } from 'vitest';
import { openMemoryLog, openSession, type SessionEventLog } from '../../src/index.js';

/** The log, with putCheckpoint failing while `failing.on`. */
const withFailingCheckpoints = (log: SessionEventLog, failing: { on: boolean }): SessionEventLog =>
  new Proxy(log, {
    get(target, key, receiver) {
      if (key === 'putCheckpoint') {
        return async (...args: unknown[]) => {
          if (failing.on) throw new Error('IO error: No space left on device');
          return (target.putCheckpoint as (...a: unknown[]) => Promise<unknown>)(...args);
        };
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });

describe('automatic checkpoints that fail', () => {
  it('the append resolves (it is committed), the failure is reported, the next append tries again, save() rejects', async () => {
    const base = await openMemoryLog();
    const failing = { on: true };
    const log = withFailingCheckpoints(base, failing);
    const reported: unknown[] = [];
    const session = await openSession(log, { id: 's', checkpointEvery: 3, onCheckpointError: (e) => reported.push(e) });
    for (let i = 0; i < 5; i++) await session.memory.addUserInput(`input ${i}`);
    expect(reported.length).toBeGreaterThan(0);
    expect(String(session.lastCheckpointError)).toMatch(/No space left/);
    let inputs = 0;
    for await (const e of base.read('s')) if (e.type === 'user.input') inputs += 1;
    expect(inputs).toBe(5);
    await expect(session.save()).rejects.toThrow(/No space left/);
    failing.on = false;
    await session.memory.addUserInput('after');
    await session.save();
    const resumed = await openSession(base, { id: 's' });
    expect(resumed.opened.from).not.toBe('full-fold');
    expect(resumed.memory.getItems()).toEqual(session.memory.getItems());
  });
});
