// forkSession and memoryAt given a seq and a step together refuse the pair by name.
import { describe, expect, it } from 'vitest';
import { forkSession, memoryAt, openMemoryLog } from '../../src/index.js';

describe('a seq and a step together', () => {
  it('are refused by name, before anything is read or written', async () => {
    const log = await openMemoryLog();
    await log.append('s', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'hi' }] }]);
    await expect(memoryAt(log, 's', { seq: 1, step: 1 } as never)).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/not both/) });
    await expect(forkSession(log, 's', { atSeq: 1, afterStep: 1 } as never, 'f')).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/not both/) });
    expect(await log.head('f')).toBe(0);
  });
});
