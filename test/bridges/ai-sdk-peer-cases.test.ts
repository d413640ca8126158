// The AI SDK's own convertToModelMessages and pruneMessages cases, run through the bridge: the messages the peer returns
// go to items, through the log as JSON, and back, and must come out deep-equal, key sets included (undefined-valued keys too).
import { convertToModelMessages, pruneMessages, type ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { fromModelMessages, toModelMessages } from '../../src/bridges/ai-sdk/index.js';
import { isBridgeInputError, isInvalidEventError, openMemoryLog, type MemoryItem } from '../../src/index.js';
import { convertToModelMessagesCases } from './peer-cases/ai-sdk-convert-to-model-messages.cases.js';
import { pruneMessagesCases } from './peer-cases/ai-sdk-prune-messages.cases.js';
import { installedVersion, otherThanLockfile } from '../support/installed-sdk.js';

/** Items through a real log: appended as a user.input event, read back. */
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

const roundTrip = async (messages: ModelMessage[]): Promise<ModelMessage[]> => toModelMessages(await throughLog(fromModelMessages(messages)));

describe('ai 6: convertToModelMessages cases of vercel/ai, through fromModelMessages → log → toModelMessages', () => {
  for (const c of convertToModelMessagesCases) {
    it(`${c.name} (line ${c.line})`, async () => {
      // The SDK matrix runs these cases on older peers too: a case the installed peer cannot convert itself (its input
      // is a later version's) has no output for the bridge to carry; on the lockfile's version every case converts.
      let peer: ModelMessage[];
      try {
        peer = await c.run(convertToModelMessages);
      } catch (error) {
        if (!otherThanLockfile('ai')) throw error;
        expect(error, `ai ${installedVersion('ai')} cannot convert this case`).toBeInstanceOf(Error);
        return;
      }
      expect(await roundTrip(peer)).toStrictEqual(peer);
    });
  }
});

// pruneMessages came during ai 5: the SDK matrix runs this file from 5.0.0, which does not have it.
if (typeof pruneMessages === 'function') {
  describe('ai 6: pruneMessages cases of vercel/ai, with the bridge between', () => {
    for (const c of pruneMessagesCases) {
      it(`${c.name} (line ${c.line})`, async () => {
        const calls: { options: Parameters<typeof pruneMessages>[0]; result: ModelMessage[] }[] = [];
        const recordingPrune: typeof pruneMessages = (options) => {
          const result = pruneMessages(options);
          calls.push({ options, result });
          return result;
        };
        const peer = await c.run(recordingPrune, convertToModelMessages);
        expect(calls).toHaveLength(1);
        const { options, result } = calls[0]!;
        expect(result).toBe(peer);
        // the case's messages survive the bridge; the peer prunes the round-tripped messages to the same result; the result survives it
        const input = await roundTrip(options.messages);
        expect(input).toStrictEqual(options.messages);
        expect(pruneMessages({ ...options, messages: input })).toStrictEqual(peer);
        expect(await roundTrip(peer)).toStrictEqual(peer);
      });
    }
  });
}

describe('what the peer refuses, the bridge refuses by name', () => {
  it('a message of an unknown role (convertToModelMessages > error handling > should throw an error for unhandled roles, line 1214)', async () => {
    // ai 5's convertToModelMessages throws at once, 6's rejects
    await expect((async () => convertToModelMessages([{ role: 'unknown' as never, parts: [{ text: 'unknown role message', type: 'text' }] }]))()).rejects.toThrow();
    let caught: unknown;
    try {
      fromModelMessages([{ role: 'unknown', content: 'unknown role message' } as never]);
    } catch (e) {
      caught = e;
    }
    expect(isBridgeInputError(caught) && { path: caught.path, index: caught.index }).toEqual({ path: '[0].role', index: 0 });
  });
});

describe('where the round trip cannot keep a value: an undefined element of an array', () => {
  it('is not a JSON value (nor one of the AI SDK\'s): the log refuses it by name, with its path, and writes nothing (docs/bridges.md)', async () => {
    const message = { role: 'user', content: [{ type: 'text', text: 'hi', providerOptions: { p: { list: [1, undefined, 3], gone: undefined } } }] } as unknown as ModelMessage;
    const refused = await roundTrip([message]).catch((e: unknown) => e);
    expect(isInvalidEventError(refused) && refused.issues[0]!.path).toBe('items.0.content.0.providerOptions.p.list.1');
    // the undefined-valued key alone comes back as such
    const keyOnly = { role: 'user', content: [{ type: 'text', text: 'hi', providerOptions: { p: { gone: undefined } } }] } as unknown as ModelMessage;
    expect(await roundTrip([keyOnly])).toStrictEqual([keyOnly]);
  });
});

// ai 7's tagged file data ({ type: 'url', url: URL }, { type: 'data', data: bytes }) goes through the log as JSON and
// comes back as it was: a URL object inside the tagged data made the log refuse the event ("an object with toJSON is not
// plain JSON"), found by the SDK matrix running the convertToModelMessages cases above on ai 7.
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
