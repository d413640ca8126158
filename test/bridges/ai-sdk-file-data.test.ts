// ai 7's tagged file data ({ type: 'url', url: URL }, { type: 'data', data: bytes }) goes through the log as JSON and
// comes back as it was: a URL object inside the tagged data made the log refuse the event ("an object with toJSON is not
// plain JSON"), found by the SDK matrix running the AI SDK's own convertToModelMessages cases on ai 7.
import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { fromModelMessages, toModelMessages } from '../../src/bridges/ai-sdk/index.js';
import { openMemoryLog, type MemoryItem } from '../../src/index.js';

const throughLog = async (items: MemoryItem[]): Promise<MemoryItem[]> => {
  const log = await openMemoryLog();
  try {
    await log.append('s', [{ type: 'session.started' }, { type: 'user.input', items }]);
    for await (const event of log.read('s')) if (event.type === 'user.input') return event.items;
    throw new Error('no user.input read back');
  } finally {
    await log.close();
  }
};

describe('file parts with tagged data (ai 7)', () => {
  it('a tagged URL and tagged bytes come back as a URL and bytes, beside the bare shapes', async () => {
    const messages = [
      {
        role: 'user',
        content: [
          { type: 'file', data: { type: 'url', url: new URL('https://example.com/a.pdf') }, mediaType: 'application/pdf', filename: 'a.pdf' },
          { type: 'file', data: { type: 'data', data: new Uint8Array([1, 2, 255]) }, mediaType: 'application/octet-stream' },
          { type: 'file', data: { type: 'text', text: 'inline' }, mediaType: 'text/plain' },
          { type: 'file', data: new URL('https://example.com/b.png'), mediaType: 'image/png' },
          { type: 'file', data: new Uint8Array([7]), mediaType: 'application/octet-stream' },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'file', data: { type: 'url', url: new URL('https://example.com/c.txt') }, mediaType: 'text/plain' }],
      },
    ] as unknown as ModelMessage[];
    const items = fromModelMessages(messages);
    expect(JSON.parse(JSON.stringify(items))).toEqual(items); // plain JSON
    const back = toModelMessages(await throughLog(items));
    expect(back).toStrictEqual(messages);
    const parts = (back[0] as { content: { data: unknown }[] }).content;
    expect((parts[0]!.data as { url: unknown }).url).toBeInstanceOf(URL);
    expect((parts[1]!.data as { data: unknown }).data).toBeInstanceOf(Uint8Array);
  });
});
